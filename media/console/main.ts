import { isConsoleMessage, type ConsolePage, type ConsoleState } from "../../extension/hostAndWebview/consoleProtocol";
import { accessPage, showToken } from "./accessPage";
import { ThroughputChart } from "./chart";
import "./console.css";
import { el, post, seconds, table } from "./dom";
import { jobsPage } from "./jobsPage";
import { workersPage } from "./workersPage";

const PAGES: ReadonlyArray<readonly [ConsolePage, string]> = [
  ["overview", "Overview"],
  ["jobs", "Jobs"],
  ["workers", "Workers"],
  ["access", "Access"],
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
const notice = el("p", undefined, { id: "notice", role: "status", hidden: "" });
const error = el("p", undefined, { id: "error", role: "alert", hidden: "" });
const content = el("div", "Loading…", { id: "content" });
panels.get("overview")?.append(notice, error, content);
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
    case "token":
      if (shown === "access") showToken(content, message.token);
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

function render(state: ConsoleState): void {
  const index = PAGES.findIndex(([page]) => page === state.page);
  if (tabs.selectedIndex !== index) tabs.setAttribute("selected-index", String(index));
  // The panels' hidden attributes too, at once (the tabs set them on their next update): a table measures its
  // width when it is added, and a table in a hidden panel would share it out evenly, whatever its columns say.
  for (const [page, panel] of panels) panel.toggleAttribute("hidden", page !== state.page);
  const panel = panels.get(state.page);
  if (panel && content.parentElement !== panel) panel.append(notice, error, content);
  error.hidden = !state.error;
  error.textContent = state.error ?? "";
  // The Access page's form and a token just made outlive re-renders: what the operator typed stays.
  // So does the Jobs page's filter bar while the filter stays the same.
  const sameAccess = state.page === "access" && shown === "access";
  const form = sameAccess ? content.querySelector<HTMLFormElement>("#token-form") : null;
  const tokenBox = sameAccess ? content.querySelector("#token-box") : null;
  const filters = state.page === "jobs" && shown === "jobs" ? content.querySelector<HTMLElement>("#filters") : null;
  if (state.page !== "overview" && chart) {
    chart.dispose();
    chart = undefined;
  }
  shown = state.page;
  content.replaceChildren();
  switch (state.page) {
    case "overview":
      return overviewPage(state);
    case "jobs":
      return jobsPage(content, state, filters);
    case "workers":
      return workersPage(content, state);
    case "access":
      return accessPage(content, state, form, tokenBox);
  }
}

function overviewPage({ overview }: ConsoleState): void {
  if (!overview) return void content.append(el("p", "Loading…"));
  const c = overview.counts;
  if (chart) chart.update(overview);
  else chart = new ThroughputChart(overview);
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
    chart.element,
  );
}

post({ type: "ready" });
