import {
  isConsoleMessage,
  JOB_STATUSES,
  type ConsoleJobPage,
  type ConsoleLeaderboard,
  type ConsoleWorker,
  type ConsolePage,
  type ConsoleRequest,
  type ConsoleState,
  type JobStatus,
} from "../../extension/hostAndWebview/consoleProtocol";

declare function acquireVsCodeApi(): { postMessage(message: ConsoleRequest): void };

const vscode = acquireVsCodeApi();
const byId = (id: string) => document.getElementById(id)!;
const SVG = "http://www.w3.org/2000/svg";

/** An element with text and attributes; data only ever goes in as text, never as markup. */
function el<K extends keyof HTMLElementTagNameMap>(tag: K, text?: string, attrs: Record<string, string> = {}): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, value);
  return node;
}

function button(label: string, onClick: () => void, attrs: Record<string, string> = {}): HTMLButtonElement {
  const b = el("button", label, { type: "button", ...attrs });
  b.addEventListener("click", onClick);
  return b;
}

function table(headers: string[], rows: Array<Array<string | Node>>, attrs: Record<string, string> = {}): HTMLTableElement {
  const t = el("table", undefined, attrs);
  const head = t.createTHead().insertRow();
  for (const h of headers) head.appendChild(el("th", h));
  const body = t.createTBody();
  for (const cells of rows) {
    const row = body.insertRow();
    for (const cell of cells) row.insertCell().append(cell);
  }
  return t;
}

const when = (ms: number | undefined) => (ms === undefined ? "—" : new Date(ms).toLocaleString());
const seconds = (ms: number | null | undefined) => (ms === null || ms === undefined ? "—" : ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`);
const hours = (ms: number) => `${(ms / 3_600_000).toFixed(2)} h`;

document.querySelectorAll<HTMLButtonElement>("#tabs button").forEach((tab) => {
  tab.addEventListener("click", () => {
    byId("notice").hidden = true; // a notice belongs to the page it was given on
    vscode.postMessage({ type: "page", page: tab.dataset.page as ConsolePage });
  });
});

window.addEventListener("message", (event: MessageEvent<unknown>) => {
  const message = event.data;
  if (!isConsoleMessage(message)) return;
  switch (message.type) {
    case "state":
      return render(message.state);
    case "token":
      return showToken(message.token);
    case "notice":
    case "rejected": {
      const notice = byId("notice");
      notice.hidden = false;
      notice.textContent = message.type === "notice" ? message.text : `Farmhand refused a message: ${message.reason}`;
      return;
    }
  }
});

let lastState: ConsoleState | undefined;

function render(state: ConsoleState): void {
  lastState = state;
  document.querySelectorAll<HTMLButtonElement>("#tabs button").forEach((tab) => tab.setAttribute("aria-selected", String(tab.dataset.page === state.page)));
  const error = byId("error");
  error.hidden = !state.error;
  error.textContent = state.error ?? "";
  const content = byId("content");
  // The Access page's form and a token just made outlive re-renders: what the operator typed stays.
  const form = state.page === "access" ? content.querySelector<HTMLFormElement>("#token-form") : null;
  const tokenBox = state.page === "access" ? content.querySelector("#token-box") : null;
  content.replaceChildren();
  switch (state.page) {
    case "overview":
      return overviewPage(content, state);
    case "jobs":
      return jobsPage(content, state);
    case "workers":
      return workersPage(content, state);
    case "access":
      return accessPage(content, state, form, tokenBox);
  }
}

function overviewPage(content: HTMLElement, { overview }: ConsoleState): void {
  if (!overview) return void content.append(el("p", "Loading…"));
  const c = overview.counts;
  content.append(
    el("h2", "Jobs"),
    table(["Pending", "Running", "Succeeded", "Dead", "Canceled"], [[`${c.pending}`, `${c.running}`, `${c.succeeded}`, `${c.dead}`, `${c.canceled}`]], { id: "counts" }),
    el("h2", "Farm"),
    table(
      ["Workers online", "Queue wait p50", "Queue wait p95", "Oldest waiting job"],
      [[`${overview.workersOnline} of ${overview.workers}`, seconds(overview.queueWait?.p50Ms), seconds(overview.queueWait?.p95Ms), seconds(overview.oldestWaitingMs)]],
      { id: "farm-figures" },
    ),
    el("h2", "Finished and failed per minute, last hour"),
    chart(overview),
  );
}

function chart(overview: NonNullable<ConsoleState["overview"]>): SVGSVGElement {
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("class", "chart");
  svg.setAttribute("viewBox", "0 0 600 100");
  svg.setAttribute("preserveAspectRatio", "none");
  svg.setAttribute("role", "img");
  const start = overview.now - 60 * 60_000;
  const peak = Math.max(1, ...overview.throughput.map((m) => Math.max(m.finished, m.failed)));
  const label = [];
  for (const m of overview.throughput) {
    const x = ((m.minuteStart - start) / (60 * 60_000)) * 600;
    for (const [value, cls, dx] of [[m.finished, "finished", 0], [m.failed, "failed", 5]] as const) {
      const rect = document.createElementNS(SVG, "rect");
      const h = (value / peak) * 100;
      rect.setAttribute("x", String(x + dx));
      rect.setAttribute("y", String(100 - h));
      rect.setAttribute("width", "4");
      rect.setAttribute("height", String(h));
      rect.setAttribute("class", cls);
      svg.appendChild(rect);
    }
    label.push(`${new Date(m.minuteStart).toLocaleTimeString()}: ${m.finished} finished, ${m.failed} failed`);
  }
  svg.setAttribute("aria-label", label.length ? label.join("; ") : "nothing finished in the last hour");
  return svg;
}

function jobsPage(content: HTMLElement, state: ConsoleState): void {
  const select = el("select", undefined, { id: "status-filter", "aria-label": "Status" });
  select.append(el("option", "Any status", { value: "" }), ...JOB_STATUSES.map((s) => el("option", s, { value: s })));
  select.value = state.status ?? "";
  select.addEventListener("change", () => vscode.postMessage({ type: "filter", status: (select.value || null) as JobStatus | null }));
  const filters = el("div", undefined, { class: "filters actions" });
  filters.append(el("label", "Status "), select);
  if (state.status === null || state.status === "dead") filters.append(button("Retry All Dead…", () => vscode.postMessage({ type: "bulk", action: "retry" }), { id: "bulk-retry", class: "secondary" }));
  if (state.status === null || state.status === "pending" || state.status === "running") {
    filters.append(button("Cancel All…", () => vscode.postMessage({ type: "bulk", action: "cancel" }), { id: "bulk-cancel", class: "secondary" }));
  }
  if (state.status === "dead") filters.append(button("Purge Dead Letters…", () => vscode.postMessage({ type: "purgeDead" }), { id: "purge-dead", class: "secondary" }));
  content.append(filters);
  if (state.bulk !== undefined) {
    const b = state.bulk;
    content.append(el("p", b === null ? "Starting…" : `${b.action}: ${b.affected} job(s) changed of ${b.scanned} looked at${b.done ? " — done" : "…"}`, { id: "bulk-status", class: "label" }));
  }
  if (state.job !== undefined) content.append(jobDetail(state.job));
  if (!state.jobs) return void content.append(el("p", "Loading…"));
  const rows = state.jobs.rows.map((j) => [
    button(j.jobId.slice(-8), () => vscode.postMessage({ type: "openJob", jobId: j.jobId }), { class: "link", title: j.jobId }),
    j.type,
    j.status,
    `${j.attempt}/${j.maxAttempts}`,
    when(j.createdAt),
    j.error ?? "",
  ]);
  content.append(table(["Job", "Type", "Status", "Attempt", "Submitted", "Error"], rows, { id: "jobs" }));
  if (rows.length === 0) content.append(el("p", "No jobs match."));
  if (!state.jobs.isDone) content.append(el("p", "Showing the newest 50.", { class: "label" }));
}

function jobDetail(job: ConsoleJobPage | null): HTMLElement {
  const box = el("section", undefined, { id: "job", class: "job" });
  if (job === null) return (box.append(el("p", "No such job.")), box);
  const actions = el("div", undefined, { class: "actions" });
  if (job.status === "dead") actions.append(button("Retry", () => vscode.postMessage({ type: "retryJob", jobId: job.jobId }), { id: "retry-job" }));
  if (job.status === "pending" || job.status === "running") {
    actions.append(button("Cancel", () => vscode.postMessage({ type: "cancelJob", jobId: job.jobId }), { id: "cancel-job" }));
  }
  actions.append(button("Close", () => vscode.postMessage({ type: "openJob", jobId: null }), { class: "secondary" }));
  box.append(
    el("h2", `${job.type} · ${job.status}`),
    el("p", `${job.jobId} · attempt ${job.attempt} of ${job.maxAttempts}${job.progress !== undefined ? ` · ${Math.round(job.progress * 100)} %` : ""}${job.suspendedSince !== undefined ? ` · frozen on its worker since ${when(job.suspendedSince)} (the donor is using the machine)` : ""}`, { class: "label" }),
    actions,
    el("h3", "Payload"),
    el("pre", JSON.stringify(job.payload, null, 2)),
  );
  if (job.result !== undefined) box.append(el("h3", "Result"), el("pre", JSON.stringify(job.result, null, 2)));
  if (job.error) box.append(el("h3", "Error"), el("pre", job.error));
  box.append(
    el("h3", "Timeline"),
    table(
      ["Time", "Event", "Worker", "Detail"],
      job.events.map((e) => [when(e.at), e.kind, e.workerName ?? "", [e.detail, e.backoffMs !== undefined ? `retry after ${seconds(e.backoffMs)}` : undefined].filter(Boolean).join(" · ")]),
      { id: "timeline" },
    ),
  );
  if (job.output.text) box.append(el("h3", "Output"), el("pre", job.output.text));
  if (job.webhook) box.append(el("h3", "Webhook"), el("p", `${job.webhook.state}, ${job.webhook.attempts.length} attempt(s)`));
  return box;
}

/** "8 cores · 16.0 GB · linux/x64 · NVIDIA RTX 4090 (24.0 GB)", or "not reported". */
function hardware(facts: ConsoleWorker["facts"]): string {
  if (!facts) return "not reported";
  const gb = (mb: number) => `${(mb / 1024).toFixed(1)} GB`;
  const gpus = facts.gpus.map((g) => `${g.model} (${gb(g.vramMB)})`);
  return [`${facts.cores} cores`, gb(facts.memoryMB), `${facts.os}/${facts.arch}`, ...gpus].join(" · ");
}

function workersPage(content: HTMLElement, { workers, leaderboard }: ConsoleState): void {
  if (!workers) return void content.append(el("p", "Loading…"));
  const rows = workers.map((w) => [
    w.name + (w.isMe ? " (this machine)" : ""),
    w.revoked ? "revoked" : w.online ? "online" : "offline",
    when(w.lastSeenAt),
    w.advertisedCapabilities.join(", "),
    hardware(w.facts),
    `${w.slotsInUse}/${w.maxConcurrentJobs}`,
    String(w.jobsDone),
    hours(w.cpuMs),
    w.revoked || w.isMe ? "" : button("Revoke…", () => vscode.postMessage({ type: "revokeWorker", workerId: w.workerId }), { class: "secondary" }),
  ]);
  content.append(table(["Worker", "State", "Last seen", "Capabilities", "Hardware", "Slots in use", "Jobs done", "CPU given", ""], rows, { id: "workers" }));
  if (!leaderboard) return;
  const board = (rows: ConsoleLeaderboard["week"]) =>
    rows.length === 0 ? [["nobody yet", "", ""]] : rows.map((r, i) => [`${i + 1}. ${r.name}`, hours(r.cpuMs) + (r.wallMs > 0 ? ` (${hours(r.wallMs)} by wall time)` : ""), String(r.jobs)]);
  content.append(
    el("h2", "Who gave most this week (from Monday 00:00 UTC)"),
    table(["Worker", "CPU given", "Jobs"], board(leaderboard.week), { id: "leaderboard-week" }),
    el("h2", "All time"),
    table(["Worker", "CPU given", "Jobs"], board(leaderboard.allTime), { id: "leaderboard-all" }),
  );
}

function accessPage(content: HTMLElement, { access }: ConsoleState, kept: HTMLFormElement | null, tokenBox: Element | null): void {
  content.append(el("h2", "New enrollment token"), kept ?? tokenForm());
  if (tokenBox) content.append(tokenBox);
  if (!access) return void content.append(el("p", "Loading…"));
  content.append(
    el("h2", "Enrollment tokens"),
    table(
      ["Token", "State", "Capabilities", "Slots", "May manage", "Expires"],
      access.enrollments.map((e) => [`${e.tokenPrefix}…`, e.state, e.capabilities.join(", "), String(e.maxConcurrentJobs), e.canManage ? "yes" : "no", when(e.expiresAt)]),
      { id: "enrollments" },
    ),
    el("h2", "Client keys"),
    table(
      ["Name", "Key", "State", "May publish apps"],
      access.clientKeys.map((k) => [k.name, `${k.keyPrefix}…`, k.revoked ? "revoked" : "active", k.canPublish ? "yes" : "no"]),
      { id: "client-keys" },
    ),
  );
}

function tokenForm(): HTMLFormElement {
  const form = el("form", undefined, { id: "token-form" });
  const caps = el("input", undefined, { id: "token-capabilities", placeholder: "demo.echo, ollama:*", "aria-label": "Capabilities" });
  const slots = el("input", undefined, { id: "token-slots", type: "number", min: "1", max: "32", value: "1", "aria-label": "Slots" });
  const ttl = el("input", undefined, { id: "token-ttl", type: "number", min: "1", max: "8760", value: "24", "aria-label": "Valid for hours" });
  const manage = el("input", undefined, { id: "token-manage", type: "checkbox", "aria-label": "May manage the farm" });
  form.append(
    el("label", "Capabilities "), caps, el("label", " Slots "), slots, el("label", " Valid for (hours) "), ttl,
    el("label", " May manage "), manage, el("button", "Create Enrollment Token", { type: "submit" }),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const capabilities = caps.value.split(",").map((c) => c.trim()).filter((c) => c.length > 0);
    vscode.postMessage({ type: "createToken", capabilities, slots: Number(slots.value), ttlHours: Number(ttl.value), canManage: manage.checked });
  });
  return form;
}

/** A token is shown once, here, with a copy button; it is never kept in the webview's state. */
function showToken(token: string): void {
  if (lastState?.page !== "access") return;
  const box = el("div", undefined, { id: "token-box", class: "token" });
  const field = el("input", undefined, { id: "token-value", readonly: "", value: token, "aria-label": "Enrollment token" });
  box.append(
    el("p", "Hand this token to the donor; it is shown only now and works once."),
    field,
    button("Copy", () => {
      field.select();
      void navigator.clipboard.writeText(token);
    }),
  );
  byId("content").querySelector("#token-box")?.remove();
  byId("token-form").after(box);
}

vscode.postMessage({ type: "ready" });
