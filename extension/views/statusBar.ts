import * as vscode from "vscode";
import { describeStatus, suspendedText, type DonorStatus, type ToggleAction } from "../hostAndWebview/donorStatus";
import { DisposableOwner } from "../lifecycle";

export type StatusBarView = {
  status: DonorStatus;
  toggle: ToggleAction;
  farmUrl: string;
  jobs: ReadonlyArray<{ type: string; progress?: number; status?: string; suspendedSince?: number }>;
  policy: string;
};

/** The one status-bar item: what this machine is doing for the farm; a click toggles donating (or resumes). */
export class StatusBar extends DisposableOwner {
  private readonly item = this._register(vscode.window.createStatusBarItem("farmhand.status", vscode.StatusBarAlignment.Left, 10));
  /** Every change of the item crosses to the window: set only what changed. */
  private last: { text?: string; tooltip?: string; kind?: DonorStatus["kind"] } = {};

  constructor() {
    super();
    this.item.name = "Farmhand";
    this.item.show();
  }

  render(view: StatusBarView): void {
    const { status } = view;
    const suspended = suspendedText(view.jobs, Date.now());
    const text = `${ICONS[status.kind]} Farmhand: ${suspended?.text ?? SHORT[status.kind](status as never)}`;
    if (text !== this.last.text) {
      this.item.text = text;
      this.item.accessibilityInformation = { label: `Farmhand ${describeStatus(status)}`, role: "button" };
    }
    if (status.kind !== this.last.kind) {
      this.item.command = status.kind === "notJoined" ? "farmhand.join" : "farmhand.toggle";
      this.item.backgroundColor =
        status.kind === "paused" || status.kind === "offline" ? new vscode.ThemeColor("statusBarItem.warningBackground") : undefined;
    }
    const tip = tooltip(view);
    if (tip !== this.last.tooltip) this.item.tooltip = new vscode.MarkdownString(tip, true);
    this.last = { text, tooltip: tip, kind: status.kind };
  }
}

const ICONS: Record<DonorStatus["kind"], string> = {
  notJoined: "$(plug)",
  off: "$(circle-slash)",
  paused: "$(debug-pause)",
  offline: "$(cloud-offline)",
  waiting: "$(pulse)",
  working: "$(sync~spin)",
};

const SHORT: { [K in DonorStatus["kind"]]: (s: Extract<DonorStatus, { kind: K }>) => string } = {
  notJoined: () => "join a farm",
  off: () => "off",
  paused: () => "paused",
  offline: () => "offline",
  waiting: () => "on",
  working: (s) => `${s.jobs} ${s.jobs === 1 ? "job" : "jobs"}`,
};

const CLICK: Record<ToggleAction, string> = {
  join: "Click to join a farm with an enrollment token from its operator.",
  start: "Click to start donating.",
  stop: "Click to stop donating.",
  resume: "Click to resume: take jobs again.",
};

/** The tooltip as Markdown text (compared before it is sent). */
function tooltip(view: StatusBarView): string {
  const lines = [`**Farmhand** — ${escape(describeStatus(view.status))}`, ""];
  if (view.toggle === "join") return [...lines, CLICK.join].join("\n");
  lines.push(`Farm: ${escape(view.farmUrl)}`, "");
  const suspended = suspendedText(view.jobs, Date.now());
  if (suspended) {
    lines.push("Held here, frozen until you leave the machine idle:", ...suspended.held.map((h) => `- $(debug-pause) ${escape(h)}`), "");
  }
  for (const job of view.jobs.filter((j) => j.suspendedSince === undefined)) {
    const pct = job.progress === undefined ? "" : ` ${Math.round(job.progress * 100)}%`;
    lines.push(`- $(gear) ${escape(job.type)}${pct}${job.status ? ` — ${escape(job.status)}` : ""}`);
  }
  lines.push("", `Policy: ${escape(view.policy)}`, "", CLICK[view.toggle]);
  return lines.join("\n");
}

function escape(text: string): string {
  return text.replace(/[\\`*_{}[\]()#+\-.!|<>]/g, "\\$&");
}
