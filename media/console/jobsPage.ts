import type { VscodeSingleSelect } from "@vscode-elements/elements/dist/vscode-single-select/vscode-single-select.js";
import type { VscodeTextfield } from "@vscode-elements/elements/dist/vscode-textfield/vscode-textfield.js";
import {
  bulkStatusText,
  describeJobFilter,
  isFairnessKey,
  JOB_STATUSES,
  resultImages,
  type ConsoleJobFilter,
  type ConsoleJobPage,
  type ConsoleValidation,
  type ConsoleState,
  type JobStatus,
} from "../../extension/protocol/consoleProtocol";
import { button, durationText, el, linkButton, post, table, when } from "./dom";

const JOBS_SHOWN = 50;
/** The text filters: name, label, placeholder, and the most characters the farm takes. */
const TEXT_FIELDS = [
  ["type", "Type", "demo.echo", 128],
  ["batchId", "Batch id", "batch id", 256],
  ["externalId", "External id", "external id", 256],
] as const;

/** The same text for the same filter, whatever order its fields were set in. */
function filterKey(f: ConsoleJobFilter): string {
  return JSON.stringify([f.status, f.type, f.batchId, f.externalId, f.from, f.to, f.clientKeyId, f.fairnessKey]);
}

type ClientKeys = NonNullable<ConsoleState["access"]>["clientKeys"];

/** The client key filter's choices: any, then the org's keys by name; redone only when the keys changed. */
function syncKeyOptions(select: VscodeSingleSelect, keys: ClientKeys, chosen: string | undefined): void {
  const signature = JSON.stringify(keys.map((k) => [k.clientKeyId, k.name]));
  if (select.dataset.keys === signature) return;
  select.dataset.keys = signature;
  const choices = keys.some((k) => k.clientKeyId === chosen) || chosen === undefined ? keys : [...keys, { clientKeyId: chosen, name: chosen }];
  select.replaceChildren(el("vscode-option", "Any client key", { value: "" }), ...choices.map((k) => el("vscode-option", k.name, { value: k.clientKeyId })));
  select.value = chosen ?? "";
}

/** A datetime-local field's value (the webview's local time) as ms since the epoch, or undefined when empty or unreadable. */
function fromLocalInput(value: string): number | undefined {
  if (value === "") return undefined;
  const ms = new Date(value).getTime();
  return Number.isFinite(ms) ? ms : undefined;
}

/** ms since the epoch as a datetime-local field's value, in the webview's local time. */
function toLocalInput(ms: number | undefined): string {
  if (ms === undefined) return "";
  const d = new Date(ms);
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/**
 * The filter bar: status (applied at once) and type, batch id, external id and the submitted-time range (applied
 * with Apply or Enter). The fields show the filter in use; what the operator types is sent only on apply.
 */
function filterBar(filter: ConsoleJobFilter, keys: ClientKeys): HTMLElement {
  const bar = el("form", undefined, { id: "filters", class: "filters" });
  const status = el("vscode-single-select", undefined, { id: "status-filter", "aria-label": "Status" });
  status.append(el("vscode-option", "Any status", { value: "" }), ...JOB_STATUSES.map((s) => el("vscode-option", s, { value: s })));
  status.value = filter.status ?? "";
  const clientKey = el("vscode-single-select", undefined, { id: "client-key-filter", "aria-label": "Client key" });
  syncKeyOptions(clientKey, keys, filter.clientKeyId);
  const fairnessKey = el("vscode-textfield", undefined, { id: "filter-fairnessKey", "aria-label": "Fairness key", placeholder: "end user, tenant" });
  fairnessKey.value = filter.fairnessKey ?? "";
  const texts = TEXT_FIELDS.map(([name, label, placeholder, maxChars]) => {
    const field = el("vscode-textfield", undefined, { id: `filter-${name}`, "aria-label": label, placeholder, maxlength: String(maxChars) });
    field.value = filter[name] ?? "";
    return [name, label, field] as const;
  });
  const from = el("vscode-textfield", undefined, { id: "filter-from", type: "datetime-local", "aria-label": "Submitted from" });
  from.value = toLocalInput(filter.from);
  const to = el("vscode-textfield", undefined, { id: "filter-to", type: "datetime-local", "aria-label": "Submitted before" });
  to.value = toLocalInput(filter.to);
  // The bar stands for the filter it sent: when the extension answers with that filter, the bar stays as it is
  // (whatever the operator typed meanwhile is kept).
  const send = (filter: ConsoleJobFilter) => {
    bar.dataset.filter = filterKey(filter);
    post({ type: "filter", filter });
  };
  const apply = () => {
    const filter = read(status, texts, from, to);
    if (clientKey.value) filter.clientKeyId = clientKey.value;
    const fairness = fairnessKey.value.trim();
    // a fairness key the farm would refuse (over 64 bytes) is marked on the field, not sent
    fairnessKey.invalid = fairness.length > 0 && !isFairnessKey(fairness);
    if (fairnessKey.invalid) return;
    if (fairness) filter.fairnessKey = fairness;
    // an empty range is the one mistake the fields allow: marked on the field, not sent
    const backwards = filter.from !== undefined && filter.to !== undefined && filter.from >= filter.to;
    to.invalid = backwards;
    to.title = backwards ? "Must be after the 'from' time" : "";
    if (!backwards) send(filter);
  };
  status.addEventListener("change", apply);
  clientKey.addEventListener("change", apply);
  bar.addEventListener("submit", (event) => (event.preventDefault(), apply()));
  bar.append(
    labelled("Status", status),
    labelled("Client key", clientKey),
    labelled("Fairness key", fairnessKey),
    ...texts.map(([, label, field]) => labelled(label, field)),
    labelled("Submitted from", from),
    labelled("before", to),
    button("Apply", apply, { id: "filter-apply" }),
    button(
      "Clear",
      () => {
        // the fields empty at once
        for (const field of [status, clientKey, fairnessKey, from, to, ...texts.map(([, , f]) => f)]) field.value = "";
        send({});
      },
      { id: "filter-clear", secondary: "" },
    ),
  );
  return bar;
}

function read(status: VscodeSingleSelect, texts: ReadonlyArray<readonly [keyof ConsoleJobFilter, string, VscodeTextfield]>, from: VscodeTextfield, to: VscodeTextfield): ConsoleJobFilter {
  const filter: ConsoleJobFilter = {};
  if (status.value) filter.status = status.value as JobStatus;
  for (const [name, , field] of texts) {
    const value = field.value.trim();
    if (value) (filter as Record<string, string>)[name] = value;
  }
  const fromMs = fromLocalInput(from.value);
  const toMs = fromLocalInput(to.value);
  if (fromMs !== undefined) filter.from = fromMs;
  if (toMs !== undefined) filter.to = toMs;
  return filter;
}

function labelled(label: string, control: HTMLElement): HTMLElement {
  const box = el("label", undefined, { class: "field" });
  box.append(el("span", label, { class: "label" }), control);
  return box;
}

/** What bulk actions the filter in use allows: retry reaches dead jobs, cancel pending or running ones, purge dead letters. */
function bulkActions(filter: ConsoleJobFilter): HTMLElement {
  const actions = el("div", undefined, { class: "actions", id: "bulk-actions", "data-filter": filterKey(filter) });
  const status = filter.status;
  if (status === undefined || status === "dead") actions.append(button("Retry All Dead…", () => post({ type: "bulk", action: "retry" }), { id: "bulk-retry", secondary: "" }));
  if (status === undefined || status === "pending" || status === "running") {
    actions.append(button("Cancel All…", () => post({ type: "bulk", action: "cancel" }), { id: "bulk-cancel", secondary: "" }));
  }
  // The purge takes a type and a time range only: offered when the filter is no narrower than that.
  const narrower = [filter.batchId, filter.externalId, filter.clientKeyId, filter.fairnessKey].some((f) => f !== undefined);
  if (status === "dead" && !narrower) {
    actions.append(button("Purge Dead Letters…", () => post({ type: "purgeDead" }), { id: "purge-dead", secondary: "" }));
  }
  return actions;
}

const FIELD_NAMES: Record<string, string> = {
  status: "status",
  type: "type",
  batchId: "batch id",
  externalId: "external id",
  clientKeyId: "client key",
  fairnessKey: "fairness key",
};

/**
 * The Jobs page. The filter bar on screen stays while the filter in use is the one it was made for (what the
 * operator is typing, an open list), however often the jobs change; so do the bulk actions, and the table's rows
 * are patched in place.
 */
export function jobsPage(content: HTMLElement, state: ConsoleState, parts: Node[]): void {
  const key = filterKey(state.filter);
  const kept = content.querySelector<HTMLElement>("#filters");
  const keys = state.access?.clientKeys ?? [];
  const bar = kept?.dataset.filter === key ? kept : filterBar(state.filter, keys);
  bar.dataset.filter = key;
  const keySelect = bar.querySelector<VscodeSingleSelect>("#client-key-filter");
  if (keySelect) syncKeyOptions(keySelect, keys, state.filter.clientKeyId);
  const keyName = (id: string | undefined) => (id === undefined ? "" : (keys.find((k) => k.clientKeyId === id)?.name ?? "…"));
  const keptActions = content.querySelector<HTMLElement>("#bulk-actions");
  parts.push(bar, keptActions?.dataset.filter === key ? keptActions : bulkActions(state.filter));
  if (state.bulk !== undefined) {
    const on = state.bulkFilter ?? state.filter;
    parts.push(el("p", bulkStatusText(state.bulk, on, keys.find((k) => k.clientKeyId === on.clientKeyId)?.name), { id: "bulk-status", class: "label" }));
  }
  if (state.job !== undefined) parts.push(jobDetail(state.job));
  const filterName = keys.find((k) => k.clientKeyId === state.filter.clientKeyId)?.name;
  const jobs = state.jobs;
  if (!jobs) return void parts.push(el("p", "Loading…"));
  // No index serves this combination: only the jobs of this bounded page were looked at (partial).
  const partial = jobs.checked.length > 0;
  if (partial) {
    // Say which fields were checked on this bounded page, so an empty or short page never passes for "nothing matches".
    const fields = jobs.checked.map((f) => FIELD_NAMES[f] ?? f).join(" and ");
    parts.push(
      el(
        "p",
        `No index serves this combination of filters: ${fields} ${jobs.checked.length > 1 ? "were" : "was"} checked on ${jobs.scanned} job(s) of the index only (page ${jobs.page + 1}).` +
          (jobs.hasOlder ? " More may match further back: use Older." : ""),
        { id: "filter-note", class: "note" },
      ),
    );
  }
  const rows = jobs.rows.map((j) => [
    linkButton(j.jobId.slice(-8), () => post({ type: "openJob", jobId: j.jobId }), { title: j.jobId }),
    j.type,
    j.status,
    [keyName(j.clientKeyId), j.fairnessKey].filter(Boolean).join(" · "),
    `${j.attempt}/${j.maxAttempts}`,
    when(j.createdAt),
    j.waitReason ? el("span", j.waitReason, { class: "wait-cell", "data-code": j.waitCode ?? "", title: `${j.waitReason} (${j.waitCode})` }) : "",
    j.error ?? "",
  ]);
  parts.push(
    table(["Job", "Type", "Status", "Client key", "Attempt", "Submitted", "Why it waits", "Last error"], rows, { id: "jobs" }, ["9%", "12%", "8%", "11%", "6%", "14%", "22%", "18%"]),
  );
  if (rows.length === 0) parts.push(el("p", partial || jobs.page > 0 ? "No jobs match on this page." : `No jobs ${describeJobFilter(state.filter, filterName)}.`, { id: "no-jobs" }));
  const pager = el("div", undefined, { class: "actions pager" });
  if (jobs.page > 0) pager.append(button("Newest", () => post({ type: "jobsPage", to: "newest" }), { id: "jobs-newest", secondary: "" }));
  if (jobs.hasOlder) pager.append(button("Older", () => post({ type: "jobsPage", to: "older" }), { id: "jobs-older", secondary: "" }));
  // "looked at" only where the page was a partial search; otherwise the page holds every match it could
  if (jobs.page > 0) pager.append(el("span", `Page ${jobs.page + 1}, ${JOBS_SHOWN} a page.`, { class: "label", id: "pager-label" }));
  else if (partial && jobs.hasOlder) pager.append(el("span", `The newest ${JOBS_SHOWN} looked at.`, { class: "label", id: "pager-label" }));
  if (pager.childElementCount > 0) parts.push(pager);
}

function jobDetail(job: ConsoleJobPage | null): HTMLElement {
  const box = el("section", undefined, { id: "job", class: "job" });
  if (job === null) return (box.append(el("p", "No such job."), button("Close", () => post({ type: "openJob", jobId: null }), { secondary: "" })), box);
  const actions = el("div", undefined, { class: "actions" });
  if (job.status === "dead") actions.append(button("Retry", () => post({ type: "retryJob", jobId: job.jobId }), { id: "retry-job" }));
  if (job.status === "pending" || job.status === "running") actions.append(button("Cancel", () => post({ type: "cancelJob", jobId: job.jobId }), { id: "cancel-job" }));
  if (job.cacheable) actions.append(button(`Drop Cached ${job.type} Results…`, () => post({ type: "invalidateCache", jobType: job.type }), { id: "invalidate-cache", secondary: "" }));
  actions.append(button("Close", () => post({ type: "openJob", jobId: null }), { id: "close-job", secondary: "" }));
  const facts = [
    job.jobId,
    `attempt ${job.attempt} of ${job.maxAttempts}`,
    job.progress !== undefined ? `${Math.round(job.progress * 100)} %` : undefined,
    job.suspendedSince !== undefined ? `frozen on its worker since ${when(job.suspendedSince)} (the donor is using the machine)` : undefined,
    job.cachedFrom !== undefined ? `cache hit: the result of job ${job.cachedFrom} (it did not run)` : undefined,
    job.errorCode === "dependency_failed" && job.failedParent ? `canceled because its parent job ${job.failedParent} did not succeed (dependency_failed)` : undefined,
    job.errorCode !== undefined && job.errorCode !== "dependency_failed" ? `ended with code ${job.errorCode}` : undefined,
  ].filter((f) => f !== undefined);
  const title = el("h2", `${job.type} · `);
  title.append(el("vscode-badge", job.status, { class: `status-${job.status}` }));
  box.append(title, el("p", facts.join(" · "), { class: "label" }));
  if (job.waitReason) box.append(waitLine(job.waitCode ?? "", job.waitReason, "wait-reason"));
  if (job.countsAgainst !== undefined) box.append(el("p", countsAgainstText(job.countsAgainst), { class: "label", id: "counts-against" }));
  box.append(actions, el("h3", "Payload"), el("pre", JSON.stringify(job.payload, null, 2)));
  if (job.result !== undefined) {
    const images = resultImages(job.result);
    box.append(el("h3", "Result"));
    for (const image of images) {
      const figure = el("figure", undefined, { class: "result-image" });
      figure.append(
        el("img", undefined, { src: `data:image/png;base64,${image.base64}`, alt: `The job's result: ${image.field} (PNG)`, id: `result-image-${image.field}` }),
        button("Save Image…", () => post({ type: "saveImage", jobId: job.jobId, field: image.field }), { id: `save-image-${image.field}`, secondary: "" }),
      );
      box.append(figure);
    }
    // the rest of the result as text, each image's base64 shortened to its size
    const text = JSON.stringify(
      job.result,
      (key, value: unknown) => (images.some((i) => i.field === key || (key === "" && i.field === "result")) && typeof value === "string" ? `<PNG, ${Math.round((value.length * 3) / 4)} bytes>` : value),
      2,
    );
    box.append(el("pre", text, { id: "result-text" }));
  }
  // a retried job still carries the error its last attempt ended with: it is news of that attempt, not of this one
  if (job.error) box.append(el("h3", job.status === "dead" ? "Error" : "Last attempt's error"), el("pre", job.error));
  box.append(
    el("h3", "Timeline"),
    table(
      ["Time", "Event", "Worker", "Detail"],
      job.events.map((e) => [when(e.at), e.kind, e.workerName ?? "", eventDetail(e)]),
      { id: "timeline" },
      ["22%", "14%", "20%", "44%"],
    ),
  );
  if (job.validation && job.validation.state !== "single") box.append(...validationSection(job.validation));
  if (job.outputs && job.outputs.length > 0) {
    // a replicated job: each instance's output apart (they run on different machines)
    for (const o of job.outputs) {
      const who = o.instance > 0 ? `instance ${o.instance}${o.round > 1 ? ` of round ${o.round}` : ""} · ${o.workerName}` : "an earlier run";
      box.append(el("h3", `Output — ${who}`), el("pre", o.text, { class: "instance-output" }));
    }
  } else if (job.output.text) box.append(el("h3", "Output"), el("pre", job.output.text));
  if (job.webhook) box.append(el("h3", "Webhook"), el("p", `${job.webhook.state}, ${job.webhook.attempts.length} attempt(s)`));
  return box;
}

/** A timeline event's detail, and a retry's backoff in human units (exact on hover). */
function eventDetail(e: ConsoleJobPage["events"][number]): string | Node {
  if (e.backoffMs === undefined) return e.detail ?? "";
  const cell = el("span", e.detail ? `${e.detail} · retry after ` : "retry after ");
  cell.append(durationText(e.backoffMs));
  return cell;
}

/** Why a job waits, the farm's sentence with its code beside it (the same words as jobs:get and farmhand status). */
function waitLine(code: string, reason: string, id?: string): HTMLElement {
  const line = el("p", undefined, { class: "wait-reason", "data-code": code, ...(id ? { id } : {}) });
  line.append(el("strong", "Why it waits: "), `${reason} `, el("code", code));
  return line;
}

/** Whose share and limit a job counts against: "Counts against client key ci (weight 3, at most 20 running), fairness key u1". */
function countsAgainstText(key: NonNullable<ConsoleJobPage["countsAgainst"]> | null): string {
  if (key === null) return "Counts against no client key (submitted by the host app itself).";
  const limit = key.maxRunning === null ? "no limit on running jobs" : `at most ${key.maxRunning} running`;
  return `Counts against client key ${key.name} (weight ${key.weight}, ${limit})${key.fairnessKey === null ? "" : `, fairness key ${key.fairnessKey}`}.`;
}

const VALIDATION_STATES: Record<ConsoleValidation["state"], string> = {
  single: "runs once",
  validating: "validating",
  valid: "valid",
  no_quorum: "no quorum: the results disagreed",
  too_many_errors: "too many failed instances",
};

/** A replicated job's instances: who ran each, how it ended, its result's hash, whether it agreed, its credit. */
function validationSection(validation: ConsoleValidation): HTMLElement[] {
  const rows = validation.instances.map((i) => [
    i.workerName,
    i.late ? `${i.status} (past its deadline)` : i.status,
    i.resultHash ? i.resultHash.slice(0, 12) : (i.error ?? ""),
    i.valid === undefined ? "" : i.valid ? "valid" : "invalid",
    [i.credit, i.creditNote].filter(Boolean).join(": "),
  ]);
  return [
    el("h3", "Validation"),
    el("p", `${VALIDATION_STATES[validation.state]} · quorum ${validation.quorum}`, { class: "label", id: "validation-state" }),
    table(["Worker", "Instance", "Result hash or error", "Verdict", "Credit"], rows, { id: "instances" }, ["18%", "12%", "16%", "10%", "44%"]),
  ];
}
