import type { FarmFigures } from "../../extension/donorState/donorState";
import { appsButtonLabel, appsText, attemptsText, creditText, farmNotice, frozenNote, policyText, refusedKeyText, statusSentence, TOGGLE_LABEL, workerText } from "../../extension/donorState/donorStateText";
import { duration } from "../../extension/donorState/format";
import { isPanelMessage, type PanelRequest, type PanelSnapshot } from "../../extension/protocol/panelProtocol";

declare function acquireVsCodeApi(): {
  postMessage(message: PanelRequest): void;
  getState(): PanelSnapshot | undefined;
  setState(state: PanelSnapshot): void;
};

const vscode = acquireVsCodeApi();
const byId = <T extends Element = HTMLElement>(id: string) => document.getElementById(id) as unknown as T;
const SVG = "http://www.w3.org/2000/svg";

byId("toggle").addEventListener("click", () => vscode.postMessage({ type: "toggle" }));
byId("join").addEventListener("click", () => vscode.postMessage({ type: "join" }));
byId("snooze").addEventListener("click", () => vscode.postMessage({ type: "snooze" }));
byId("finish").addEventListener("click", () => vscode.postMessage({ type: "finishAndStop" }));
byId("fix").addEventListener("click", () => vscode.postMessage({ type: "fixPause" }));
// The switch says what it does for the state last shown: allow (the host asks consent first) or stop.
let runsApps = false;
byId("appsSwitch").addEventListener("click", () => vscode.postMessage({ type: "setRunApps", allow: !runsApps }));

window.addEventListener("message", (event: MessageEvent<unknown>) => {
  const message = event.data;
  if (!isPanelMessage(message)) return;
  switch (message.type) {
    case "hello":
      // The version only: whether the farm answers is the state's to say (the heading below).
      byId("answer").textContent = `Farmhand ${message.version}`;
      render(message.snapshot);
      return;
    case "snapshot":
      render(message.snapshot);
      return;
    case "rejected":
      showRefusal(message.reason);
      return;
  }
});

// A refused message is news until the donor's state next changes; after that it would only mislead.
let shownState = "";
let refusalShownIn: string | undefined;

function showRefusal(reason: string): void {
  byId("rejected").hidden = false;
  byId("rejected").textContent = `Farmhand refused a message: ${reason}`;
  refusalShownIn = shownState;
}

function render(s: PanelSnapshot): void {
  vscode.setState(s);
  shownState = `${s.status.kind}/${s.toggle}`;
  if (refusalShownIn !== undefined && refusalShownIn !== shownState) {
    byId("rejected").hidden = true;
    refusalShownIn = undefined;
  }
  byId("state").hidden = false;
  byId("status").textContent = `Farmhand is ${statusSentence(s)}`;
  byId("farm").textContent = s.joined ? `Farm: ${s.farmUrl}` : "Not joined to a farm yet.";
  byId("toggle").textContent = TOGGLE_LABEL[s.toggle];
  byId("toggle").hidden = s.toggle === "join";
  byId("join").hidden = s.toggle !== "join";
  byId("snooze").hidden = !s.actions.snooze;
  byId("finish").hidden = !s.actions.finish;
  byId("fix").hidden = !s.actions.fix;
  byId("fix").textContent = s.actions.fix?.label ?? "";
  byId("refused").hidden = s.status.kind !== "revoked";
  byId("refused").textContent = s.status.kind === "revoked" ? refusedKeyText(s.status.problem) : "";

  byId("jobs").replaceChildren(
    ...(s.jobs.length === 0
      ? [item("No jobs running.", "label")]
      : s.jobs.map((job) => {
          const li = item(`${job.type} `);
          const bar = document.createElement("progress");
          bar.max = 1;
          if (job.progress !== undefined) bar.value = job.progress;
          li.append(bar, ` ${duration(s.at - job.startedAt)} ${job.suspendedSince === undefined ? "" : `${frozenNote(job.suspendedSince, s.at)} `}${job.status ?? ""}`);
          return li;
        })),
  );
  const c = s.contribution;
  byId("contribution").textContent = `Given this session: ${c.succeeded} jobs done, ${c.failed} failed, ${c.canceled} canceled · ${duration(c.busyMs)} of work`;
  byId("credit").hidden = !s.credit;
  byId("credit").textContent = s.credit ? creditText(s.credit) : "";
  runsApps = s.runsApps;
  byId("apps").textContent = appsText(s.runsApps);
  byId("appsSwitch").textContent = appsButtonLabel(s.runsApps);
  byId("policy").textContent = policyText(s.policy);
  byId("problems").replaceChildren(...s.policy.problems.map((text) => item(text)));

  // A refused key says so above; old figures say how old they are; missing ones say why.
  const figures = s.status.kind === "revoked" ? undefined : s.farm.figures;
  byId("farmPart").hidden = !figures;
  if (figures) renderFarm(figures, s.at);
  const notice = s.status.kind === "revoked" || !s.joined ? undefined : farmNotice(s.farm.freshness, s.at);
  byId("farmError").hidden = !notice;
  byId("farmError").textContent = notice ?? "";
}

function renderFarm(f: FarmFigures, at: number): void {
  const n = f.counts;
  byId("counts").textContent = `${n.pending} pending · ${n.running} running · ${n.succeeded} succeeded · ${n.canceled} canceled · ${n.dead} dead`;
  byId("throughputLabel").textContent = `${f.finishedLastHour} jobs finished in the last hour`;
  drawChart(byId<SVGSVGElement>("chart"), f.throughput);
  byId("workers").replaceChildren(
    ...f.workers.map((w) => item(`${w.online ? "●" : "○"} ${w.name}${w.isMe ? " (this machine)" : ""} — ${workerText(w, at)}`)),
  );
  byId("deadTitle").textContent = `Dead letters (${f.deadTotal})`;
  byId("dead").replaceChildren(
    ...(f.dead.length === 0
      ? [item("None.", "label")]
      : f.dead.map((d) => {
          const li = item(`${d.type} · ${attemptsText(d)} · ${d.error ?? "no error text"} `);
          if (f.canManage) li.append(action("Retry", { type: "retryDead", jobId: d.jobId }), action("Delete", { type: "purgeDead", jobId: d.jobId }));
          return li;
        })),
  );
  byId("manageHint").hidden = f.canManage || f.dead.length === 0;
}

function drawChart(svg: SVGSVGElement, series: number[]): void {
  const max = Math.max(1, ...series);
  const width = 240 / series.length;
  svg.replaceChildren(
    ...series.map((value, i) => {
      const bar = document.createElementNS(SVG, "rect");
      const height = (value / max) * 46;
      bar.setAttribute("x", String(i * width));
      bar.setAttribute("y", String(48 - height));
      bar.setAttribute("width", String(Math.max(1, width - 1)));
      bar.setAttribute("height", String(height));
      const title = document.createElementNS(SVG, "title");
      title.textContent = `${value} finished, ${series.length - 1 - i} min ago`;
      bar.append(title);
      return bar;
    }),
  );
}

function action(label: string, request: PanelRequest): HTMLButtonElement {
  const button = document.createElement("button");
  button.type = "button";
  button.className = "secondary small";
  button.textContent = label;
  button.addEventListener("click", () => vscode.postMessage(request));
  return button;
}

function item(text: string, className?: string): HTMLLIElement {
  const li = document.createElement("li");
  li.textContent = text;
  if (className) li.className = className;
  return li;
}

const saved = vscode.getState();
if (saved) render(saved);
vscode.postMessage({ type: "ready" });
