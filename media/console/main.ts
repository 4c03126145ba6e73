import { percent } from "../../extension/donorState/format";
import { laneLabel } from "../../convex/contract";
import { cacheHitsText, isConsoleMessage, overviewAt, shareOfFinished, type ConsolePage, type ConsoleState, type ConsoleStuckLane } from "../../extension/protocol/consoleProtocol";
import { accessPage, showFairnessWeights, showSecret } from "./accessPage";
import { ThroughputChart } from "./chart";
import "./console.css";
import { beginRender, durationText, el, linkButton, post, reconcile, table } from "./dom";
import { energySection } from "./energySection";
import { jobsPage } from "./jobsPage";
import { schedulesPage } from "./schedulesPage";
import { workersPage } from "./workersPage";

const PAGES: ReadonlyArray<readonly [ConsolePage, string]> = [
  ["overview", "Overview"],
  ["jobs", "Jobs"],
  ["workers", "Workers"],
  ["access", "Access"],
  ["schedules", "Schedules"],
];

// The tabs, one panel per page; the page in view holds the notice, the error and the content.
const tabs = el("vscode-tabs", undefined, { id: "tabs" });
const panels = new Map<ConsolePage, HTMLElement>();
for (const [page, label] of PAGES) tabs.append(el("vscode-tab-header", label, { slot: "header", "data-page": page }));
for (const [page] of PAGES) {
  const panel = el("vscode-tab-panel", undefined, { "data-page": page });
  panels.set(page, panel);
  tabs.append(panel);
}
const credential = el("p", undefined, { id: "credential", class: "label", hidden: "" });
const offline = el("p", undefined, { id: "offline", role: "status", hidden: "" });
const notice = el("p", undefined, { id: "notice", role: "status", hidden: "" });
const error = el("p", undefined, { id: "error", role: "alert", hidden: "" });
const content = el("div", "Loading…", { id: "content" });
panels.get("overview")?.append(credential, offline, notice, error, content);
document.body.append(tabs);

tabs.addEventListener("vsc-tabs-select", (event) => {
  const page = PAGES[event.detail.selectedIndex]?.[0];
  if (!page) return;
  notice.hidden = true; // a notice belongs to the page it was given on
  post({ type: "page", page });
});

window.addEventListener("message", (event: MessageEvent<unknown>) => {
  const message = event.data;
  if (!isConsoleMessage(message)) return;
  switch (message.type) {
    case "state":
      return render(message.state);
    case "secret":
      if (shown === "access") showSecret(content, message.kind, message.secret);
      return;
    case "fairnessWeights":
      if (shown === "access") showFairnessWeights(content, message.clientKeyId, message.entries);
      return;
    case "notice":
    case "rejected":
      notice.hidden = false;
      notice.textContent = message.type === "notice" ? message.text : `Farmhand refused a message: ${message.reason}`;
      return;
  }
});

let shown: ConsolePage | undefined;
let chart: ThroughputChart | undefined;
let last: ConsoleState | undefined;

function render(state: ConsoleState): void {
  last = state;
  const now = Date.now();
  const index = PAGES.findIndex(([page]) => page === state.page);
  if (tabs.selectedIndex !== index) tabs.setAttribute("selected-index", String(index));
  // The panels' hidden attributes too, at once (the tabs set them on their next update): a table measures its
  // width when it is added, and a table in a hidden panel would share it out evenly, whatever its columns say.
  for (const [page, panel] of panels) panel.toggleAttribute("hidden", page !== state.page);
  const panel = panels.get(state.page);
  if (panel && content.parentElement !== panel) panel.append(credential, offline, notice, error, content);
  credential.hidden = !state.credential;
  credential.textContent = state.credential ? `Signed in with ${state.credential}.` : "";
  offline.hidden = state.offlineSince === undefined;
  offline.textContent =
    state.offlineSince === undefined ? "" : `The farm is offline since ${new Date(state.offlineSince).toLocaleTimeString()}: what you see is as of then. Farmhand reconnects on its own.`;
  error.hidden = !state.error;
  error.textContent = state.error ?? "";
  if (state.page !== "overview" && chart) {
    chart.dispose();
    chart = undefined;
  }
  // Another page: start from nothing. The same page: what is on screen is patched (see reconcile and table), so a
  // live update never re-creates a control the operator is using.
  if (shown !== state.page) content.replaceChildren();
  shown = state.page;
  beginRender(content);
  const parts: Node[] = [];
  switch (state.page) {
    case "overview":
      overviewPage(state, parts, now);
      break;
    case "jobs":
      jobsPage(content, state, parts);
      break;
    case "workers":
      workersPage(state, parts, now);
      break;
    case "access":
      accessPage(content, state, parts, now);
      break;
    case "schedules":
      schedulesPage(state, parts);
      break;
  }
  reconcile(content, parts);
}

// What time changes (online, waiting for, expired) is derived here from the farm's timestamps: shown afresh as
// time passes, without asking the farm again.
setInterval(() => {
  if (last && last.page !== "jobs") render(last);
}, 15_000);

/** Lanes whose jobs nothing online can run: the lane, how many wait, why, and a link to those jobs. */
function stuckSection(stuck: ConsoleStuckLane[]): Node[] {
  if (stuck.length === 0) return [];
  const show = (lane: ConsoleStuckLane) => () => {
    post({ type: "filter", filter: { status: "pending", ...(lane.type !== null ? { type: lane.type } : {}) } });
    post({ type: "page", page: "jobs" });
  };
  return [
    el("h2", "Stuck: nothing online can run these"),
    table(
      ["Lane", "Waiting", "Why", ""],
      stuck.map((lane) => [
        laneLabel({ capabilities: lane.capabilities, requirements: lane.requirements ?? undefined, apps: lane.apps, moreApps: lane.moreApps }),
        String(lane.pending),
        el("span", lane.waitReason, { class: "wait-cell", "data-code": lane.waitCode, title: `${lane.waitReason} (${lane.waitCode})` }),
        linkButton("Show jobs", show(lane), { class: "stuck-link", title: lane.type !== null ? `The waiting ${lane.type} jobs` : "The waiting jobs" }),
      ]),
      { id: "stuck" },
      ["28%", "9%", "51%", "12%"],
    ),
  ];
}

function overviewPage({ overview, energy }: ConsoleState, parts: Node[], now: number): void {
  if (!overview) return void parts.push(el("p", "Loading…"));
  const c = overview.counts;
  const at = overviewAt(overview, now);
  if (chart) chart.update(overview, now);
  else chart = new ThroughputChart(overview, now);
  parts.push(
    el("h2", "Jobs"),
    table(["Pending", "Running", "Succeeded", "Dead", "Canceled"], [[`${c.pending}`, `${c.running}`, `${c.succeeded}`, `${c.dead}`, `${c.canceled}`]], { id: "counts" }),
    el("h2", "Farm"),
    table(
      ["Workers online", "Queue wait p50", "Queue wait p95", "Oldest waiting job", "Answered from cache"],
      [
        [
          `${at.workersOnline} of ${overview.workers}`,
          durationText(overview.queueWait?.p50Ms),
          durationText(overview.queueWait?.p95Ms),
          durationText(at.oldestWaitingMs),
          el("span", cacheHitsText(overview), { id: "cache-hits", title: "Jobs created already succeeded with an identical job's result, no donor running them (farmhand_cache_hits_total)" }),
        ],
      ],
      { id: "farm-figures" },
    ),
    ...stuckSection(overview.stuck ?? []),
    el("h2", "Finished and failed per minute, last hour"),
    chart.element,
    el("h2", "Client keys"),
  );
  if (at.clientKeys.length === 0) parts.push(el("p", "No client key has jobs waiting or running, or started or ended any yet.", { class: "label", id: "no-client-keys" }));
  else {
    parts.push(
      table(
        ["Client key", "Weight", "Running", "Waiting", "Share, last hour", "Oldest wait", "Ended: ok / dead / canceled", "Share of jobs ended"],
        at.clientKeys.map((k) => [
          k.clientKeyId === null ? "none (a host app's own jobs)" : k.name,
          k.weight === null ? "—" : String(k.weight),
          k.maxRunning === null ? String(k.running) : `${k.running} of ${k.maxRunning}`,
          String(k.waiting),
          percent(k.shareLastHour),
          durationText(k.oldestWaitingMs),
          `${k.finished.succeeded} / ${k.finished.dead} / ${k.finished.canceled}`,
          percent(shareOfFinished(k, overview.finished)),
        ]),
        { id: "client-key-shares" },
        // at 1280 px every header fits whole (the last two are the longest)
        ["16%", "7%", "9%", "8%", "12%", "11%", "20%", "17%"],
      ),
    );
  }
  if (overview.waitsByType.length > 0) {
    parts.push(
      el("h2", "Queue wait by job type, recently"),
      table(
        ["Job type", "Wait p50", "Wait p95"],
        overview.waitsByType.map((t) => [t.type, durationText(t.p50Ms), durationText(t.p95Ms)]),
        { id: "waits-by-type" },
      ),
    );
  }
  energySection(energy, parts);
}

post({ type: "ready" });
