import { isPanelMessage, type PanelRequest, type PanelSnapshot } from "../../extension/views/panelProtocol";

declare function acquireVsCodeApi(): { postMessage(message: PanelRequest): void };

const vscode = acquireVsCodeApi();
const answer = document.getElementById("answer")!;
const stateSection = document.getElementById("state")!;
const donating = document.getElementById("donating")!;
const reason = document.getElementById("reason")!;
const toggle = document.getElementById("toggle") as HTMLButtonElement;

toggle.addEventListener("click", () => vscode.postMessage({ type: "toggle" }));

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
  stateSection.hidden = false;
  donating.textContent = snapshot.state === "paused" ? "paused" : snapshot.state;
  reason.hidden = !snapshot.pausedReason;
  reason.textContent = snapshot.pausedReason ? `Paused: ${snapshot.pausedReason}` : "";
  toggle.textContent = snapshot.state === "off" ? "Start donating" : "Stop donating";
}

vscode.postMessage({ type: "ready" });
