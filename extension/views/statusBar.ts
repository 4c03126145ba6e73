import * as vscode from "vscode";
import { Disposable } from "./disposable";
import { describeStatus, type DonorStatus } from "./donorStatus";

export type StatusBarView = {
  status: DonorStatus;
  farmUrl: string;
  jobs: ReadonlyArray<{ type: string; progress?: number; status?: string }>;
  policy: string;
};

/** The one status-bar item: what this machine is doing for the farm; a click toggles donating. */
export class StatusBar extends Disposable {
  private readonly item = this._register(
    vscode.window.createStatusBarItem("farmhand.status", vscode.StatusBarAlignment.Left, 10),
  );

  constructor() {
    super();
    this.item.name = "Farmhand";
    this.item.show();
  }

  render(view: StatusBarView): void {
    const { status } = view;
    this.item.text = `${ICONS[status.kind]} Farmhand: ${SHORT[status.kind](status as never)}`;
    this.item.command = status.kind === "notJoined" ? "farmhand.join" : "farmhand.toggle";
    this.item.backgroundColor =
      status.kind === "paused" || status.kind === "offline" ? new vscode.ThemeColor("statusBarItem.warningBackground") : undefined;
    this.item.tooltip = tooltip(view);
    this.item.accessibilityInformation = { label: `Farmhand ${describeStatus(status)}`, role: "button" };
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

function tooltip(view: StatusBarView): vscode.MarkdownString {
  const md = new vscode.MarkdownString(undefined, true);
  md.appendMarkdown(`**Farmhand** — ${escape(describeStatus(view.status))}\n\n`);
  if (view.status.kind === "notJoined") {
    md.appendMarkdown("Click to join a farm with an enrollment token from its operator.");
    return md;
  }
  md.appendMarkdown(`Farm: ${escape(view.farmUrl)}\n\n`);
  for (const job of view.jobs) {
    const pct = job.progress === undefined ? "" : ` ${Math.round(job.progress * 100)}%`;
    md.appendMarkdown(`- $(gear) ${escape(job.type)}${pct}${job.status ? ` — ${escape(job.status)}` : ""}\n`);
  }
  md.appendMarkdown(`\nPolicy: ${escape(view.policy)}\n\n`);
  md.appendMarkdown(view.status.kind === "off" ? "Click to start donating." : "Click to stop donating.");
  return md;
}

function escape(text: string): string {
  return text.replace(/[\\`*_{}[\]()#+\-.!|<>]/g, "\\$&");
}
