/**
 * The typed message protocol between the control-panel webview and the extension.
 * Shared by both sides (media/panel/main.ts imports it too); no 'vscode' import here.
 */

export type PanelSnapshot = {
  donating: boolean;
  /** "off" | "on" | "paused" — mirrors DonationState.kind. */
  state: "off" | "on" | "paused";
  pausedReason?: string;
  joined: boolean;
};

/** Webview → extension. */
export type PanelRequest = { type: "ready" } | { type: "toggle" };

/** Extension → webview. */
export type PanelMessage =
  | { type: "hello"; version: string; snapshot: PanelSnapshot }
  | { type: "snapshot"; snapshot: PanelSnapshot }
  | { type: "rejected"; reason: string };

const REQUEST_TYPES: ReadonlySet<string> = new Set<PanelRequest["type"]>(["ready", "toggle"]);

/** Validates a message that arrived from the webview; anything else is refused with the reason. */
export function parsePanelRequest(raw: unknown): { ok: true; request: PanelRequest } | { ok: false; reason: string } {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    return { ok: false, reason: "message is not an object" };
  }
  const { type, ...rest } = raw as Record<string, unknown>;
  if (typeof type !== "string" || !REQUEST_TYPES.has(type)) {
    return { ok: false, reason: `unknown message type ${JSON.stringify(type)}` };
  }
  const extra = Object.keys(rest);
  if (extra.length > 0) return { ok: false, reason: `unexpected field(s) ${extra.join(", ")} in "${type}"` };
  return { ok: true, request: { type } as PanelRequest };
}

export function isPanelMessage(raw: unknown): raw is PanelMessage {
  if (typeof raw !== "object" || raw === null) return false;
  const type = (raw as { type?: unknown }).type;
  return type === "hello" || type === "snapshot" || type === "rejected";
}
