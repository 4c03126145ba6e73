import { describeStatus } from "../../extension/views/donorStatus";
import { isPanelMessage, type PanelRequest, type PanelSnapshot } from "../../extension/views/panelProtocol";

declare function acquireVsCodeApi(): {
  postMessage(message: PanelRequest): void;
  getState(): PanelSnapshot | undefined;
  setState(state: PanelSnapshot): void;
};

const vscode = acquireVsCodeApi();
const byId = <T extends HTMLElement = HTMLElement>(id: string) => document.getElementById(id) as T;
const answer = byId("answer");

byId("toggle").addEventListener("click", () => vscode.postMessage({ type: "toggle" }));
byId("join").addEventListener("click", () => vscode.postMessage({ type: "join" }));
byId("snooze").addEventListener("click", () => vscode.postMessage({ type: "snooze" }));
byId("finish").addEventListener("click", () => vscode.postMessage({ type: "finishAndStop" }));

window.addEventListener("message", (event: MessageEvent<unknown>) => {
  const message = event.data;
  if (!isPanelMessage(message)) return;
  switch (message.type) {
    case "hello":
      answer.textContent = `Connected to Farmhand ${message.version}`;
      render(message.snapshot);
      return;
    case "snapshot":
      render(message.snapshot);
      return;
    case "rejected":
      answer.textContent = `Farmhand refused a message: ${message.reason}`;
      return;
  }
});

function render(snapshot: PanelSnapshot): void {
  vscode.setState(snapshot);
  byId("state").hidden = false;
  byId("status").textContent = `Farmhand is ${describeStatus(snapshot.status)}`;
  byId("farm").textContent = snapshot.joined ? `Farm: ${snapshot.farmUrl}` : "Not joined to a farm yet.";
  byId("toggle").textContent = snapshot.wanted ? "Stop donating" : "Start donating";
  byId("toggle").hidden = !snapshot.joined;
  byId("join").hidden = snapshot.joined;
  byId("snooze").hidden = !snapshot.joined || !snapshot.wanted;
  byId("finish").hidden = !snapshot.joined || snapshot.jobs.length === 0;

  const jobs = byId("jobs");
  jobs.replaceChildren(
    ...(snapshot.jobs.length === 0
      ? [item("No jobs running.", "label")]
      : snapshot.jobs.map((job) => {
          const li = item(`${job.type} `);
          const bar = document.createElement("progress");
          bar.max = 1;
          if (job.progress !== undefined) bar.value = job.progress;
          li.append(bar, ` ${job.status ?? ""}`);
          return li;
        })),
  );
  byId("totals").textContent = `Done here this session: ${snapshot.totals.succeeded} succeeded, ${snapshot.totals.failed} failed, ${snapshot.totals.canceled} canceled`;
  const p = snapshot.policy;
  byId("policy").textContent = `${p.preset} preset · up to ${p.concurrency} job(s) · after ${p.idleMinutes} idle min · pauses above ${p.otherCpuPercent}% CPU from other programs`;
  byId("problems").replaceChildren(...p.problems.map((text) => item(text)));
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
