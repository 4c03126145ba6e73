/**
 * The typed message protocol between the control-panel webview and the extension.
 * Shared by both sides (media/panel/main.ts imports it too); no 'vscode' import here.
 */
import type { DonorStatus } from "./donorStatus";

export type PanelJob = { jobId: string; type: string; progress?: number; status?: string; startedAt: number };

export type PanelSnapshot = {
  joined: boolean;
  /** The donor has switched donating on (the policy may still pause it). */
  wanted: boolean;
  /** The policy allows donating right now. */
  donating: boolean;
  status: DonorStatus;
  statusText: string;
  farmUrl: string;
  policy: { preset: string; concurrency: number; idleMinutes: number; otherCpuPercent: number; problems: string[] };
  jobs: PanelJob[];
  totals: { succeeded: number; failed: number; canceled: number };
};

/** Webview → extension. Every one is validated before it is acted on. */
export type PanelRequest =
  | { type: "ready" }
  | { type: "toggle" }
  | { type: "join" }
  | { type: "snooze" }
  | { type: "finishAndStop" };

/** Extension → webview. */
export type PanelMessage =
  | { type: "hello"; version: string; snapshot: PanelSnapshot }
  | { type: "snapshot"; snapshot: PanelSnapshot }
  | { type: "rejected"; reason: string };

const REQUEST_TYPES: ReadonlySet<string> = new Set<PanelRequest["type"]>(["ready", "toggle", "join", "snooze", "finishAndStop"]);

/** Validates a message that arrived from the webview; anything else is refused with the reason. */
export function parsePanelRequest(raw: unknown): { ok: true; request: PanelRequest } | { ok: false; reason: string } {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    return { ok: false, reason: "message is not an object" };
  }
  const { type, ...rest } = raw as Record<string, unknown>;
  if (typeof type !== "string" || !REQUEST_TYPES.has(type)) {
    return { ok: false, reason: `unknown message type ${JSON.stringify(type)?.slice(0, 80)}` };
  }
  const extra = Object.keys(rest);
  if (extra.length > 0) return { ok: false, reason: `unexpected field(s) ${extra.slice(0, 5).join(", ")} in "${type}"` };
  return { ok: true, request: { type } as PanelRequest };
}

export function isPanelMessage(raw: unknown): raw is PanelMessage {
  if (typeof raw !== "object" || raw === null) return false;
  const type = (raw as { type?: unknown }).type;
  return type === "hello" || type === "snapshot" || type === "rejected";
}
