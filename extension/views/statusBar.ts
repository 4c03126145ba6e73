import * as vscode from "vscode";
import type { DonorState, HeadlineKind } from "../donorState/donorState";
import { farmNotice, policyText, refusedKeyText, statusSentence, statusWords, suspendedText, TOGGLE_HINT } from "../donorState/donorStateText";
import { DisposableOwner } from "../lifecycle";

/** The one status-bar item: what this machine is doing for the farm; a click does what the state's toggle says. */
export class StatusBar extends DisposableOwner {
  private readonly item = this._register(vscode.window.createStatusBarItem("farmhand.status", vscode.StatusBarAlignment.Left, 10));
  /** Every change of the item crosses to the window: set only what changed. */
  private last: { text?: string; tooltip?: string; kind?: HeadlineKind; at?: number } = {};

  constructor() {
    super();
    this.item.name = "Farmhand";
    this.item.show();
  }

  /** What the item shows now (the host tests read it). */
  shown(): { text: string; tooltip: string; command: string | undefined; at?: number } {
    const command = typeof this.item.command === "string" ? this.item.command : this.item.command?.command;
    return { text: this.item.text, tooltip: this.last.tooltip ?? "", command, ...(this.last.at === undefined ? {} : { at: this.last.at }) };
  }

  render(state: DonorState): void {
    const { status } = state;
    const text = `${ICONS[status.kind]} Farmhand: ${statusWords(state)}`;
    if (text !== this.last.text) {
      this.item.text = text;
      this.item.accessibilityInformation = { label: `Farmhand ${statusSentence(state)}`, role: "button" };
    }
    if (status.kind !== this.last.kind) {
      this.item.command = "farmhand.toggle";
      this.item.backgroundColor = WARN.has(status.kind) ? new vscode.ThemeColor(status.kind === "revoked" ? "statusBarItem.errorBackground" : "statusBarItem.warningBackground") : undefined;
    }
    const tip = this.tooltip(state);
    if (tip !== this.last.tooltip) {
      const markdown = new vscode.MarkdownString(tip, true);
      markdown.isTrusted = { enabledCommands: ["farmhand.fixPause"] }; // the one link it may hold: lift the pause
      this.item.tooltip = markdown;
    }
    this.last = { text, tooltip: tip, kind: status.kind, at: state.at };
  }

  /** The tooltip as Markdown text (compared before it is sent). */
  private tooltip(state: DonorState): string {
    const { status } = state;
    const lines = [`**Farmhand** — ${escape(statusSentence(state))}`, ""];
    if (status.kind === "notJoined") return [...lines, TOGGLE_HINT.join].join("\n");
    if (status.kind === "revoked") lines.push(escape(refusedKeyText(status.problem)), "");
    if (state.actions.fix) lines.push(`[${escape(state.actions.fix.label)}](command:farmhand.fixPause)`, "");
    lines.push(`Farm: ${escape(state.farmUrl)}`, "");
    const notice = farmNotice(state.farm.freshness, state.at);
    if (notice && state.farm.freshness.kind === "lastKnown") lines.push(escape(notice), "");
    const suspended = suspendedText(state.jobs, state.at);
    if (suspended) {
      const until = status.kind === "suspended" && status.cause === "exclusiveApp" ? "it stops running" : state.gpuPause && status.kind !== "suspended" ? "the program ends" : "you leave the machine idle";
      lines.push(`Held here, frozen until ${until}:`, ...suspended.held.map((h) => `- $(debug-pause) ${escape(h)}`), "");
    }
    for (const job of state.jobs.filter((j) => j.suspendedSince === undefined)) {
      const pct = job.progress === undefined ? "" : ` ${Math.round(job.progress * 100)} %`;
      lines.push(`- $(gear) ${escape(job.type)}${pct}${job.status ? ` — ${escape(job.status)}` : ""}`);
    }
    lines.push("", `Policy: ${escape(policyText(state.policy))}`, "", TOGGLE_HINT[state.toggle]);
    return lines.join("\n");
  }
}

const WARN = new Set<HeadlineKind>(["paused", "autoPaused", "offline", "revoked", "stopped", "suspended"]);

const ICONS: Record<HeadlineKind, string> = {
  notJoined: "$(plug)",
  revoked: "$(error)",
  off: "$(circle-slash)",
  starting: "$(loading~spin)",
  waiting: "$(pulse)",
  working: "$(sync~spin)",
  draining: "$(debug-step-out)",
  stopping: "$(loading~spin)",
  paused: "$(debug-pause)",
  autoPaused: "$(debug-pause)",
  suspended: "$(debug-pause)",
  offline: "$(cloud-offline)",
  stopped: "$(debug-stop)",
};

function escape(text: string): string {
  return text.replace(/[\\`*_{}[\]()#+\-.!|<>]/g, "\\$&");
}
