/**
 * The typed message protocol between the control-panel webview and the extension.
 * Shared by both sides (media/panel/main.ts imports it too); no 'vscode' import here.
 */
import type { DonorState } from "../donorState/donorState";

/** The panel shows the donor state as it is: the same object every other surface reads. */
export type PanelSnapshot = DonorState;

/** Webview → extension. Every one is validated before it is acted on. */
export type PanelRequest =
  | { type: "ready" }
  | { type: "toggle" }
  | { type: "join" }
  | { type: "snooze" }
  | { type: "finishAndStop" }
  | { type: "fixPause" }
  /** The apps switch: `allow` asks the donor's consent first (modal), then sets `farmhand.runApps` in the user settings. */
  | { type: "setRunApps"; allow: boolean }
  | { type: "retryDead"; jobId: string }
  | { type: "purgeDead"; jobId: string }
  | { type: "cancelJob"; jobId: string };

/** Extension → webview. */
export type PanelMessage =
  | { type: "hello"; version: string; snapshot: PanelSnapshot }
  | { type: "snapshot"; snapshot: PanelSnapshot }
  | { type: "rejected"; reason: string };

/** The fields each request carries besides `type`; a Convex id is lowercase letters and digits. */
const REQUEST_FIELDS: Record<PanelRequest["type"], readonly string[]> = {
  ready: [],
  toggle: [],
  join: [],
  snooze: [],
  finishAndStop: [],
  fixPause: [],
  setRunApps: ["allow"],
  retryDead: ["jobId"],
  purgeDead: ["jobId"],
  cancelJob: ["jobId"],
};
const JOB_ID = /^[a-z0-9]{1,64}$/;

/** A Convex document id as a job id: lowercase letters and digits. */
export function isJobId(value: string): boolean {
  return JOB_ID.test(value);
}

/** Validates a message that arrived from the webview; anything else is refused with the reason. */
export function parsePanelRequest(raw: unknown): { ok: true; request: PanelRequest } | { ok: false; reason: string } {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    return { ok: false, reason: "message is not an object" };
  }
  const { type, ...rest } = raw as Record<string, unknown>;
  if (typeof type !== "string" || !Object.hasOwn(REQUEST_FIELDS, type)) {
    return { ok: false, reason: `unknown message type ${JSON.stringify(type)?.slice(0, 80)}` };
  }
  const fields = REQUEST_FIELDS[type as PanelRequest["type"]];
  const extra = Object.keys(rest).filter((k) => !fields.includes(k));
  if (extra.length > 0) return { ok: false, reason: `unexpected field(s) ${extra.slice(0, 5).join(", ")} in "${type}"` };
  if (fields.includes("jobId") && (typeof rest.jobId !== "string" || !JOB_ID.test(rest.jobId))) {
    return { ok: false, reason: `"${type}" needs a jobId of lowercase letters and digits` };
  }
  if (fields.includes("allow") && typeof rest.allow !== "boolean") {
    return { ok: false, reason: `"${type}" needs allow: true or false` };
  }
  return { ok: true, request: { type, ...rest } as PanelRequest };
}

export function isPanelMessage(raw: unknown): raw is PanelMessage {
  if (typeof raw !== "object" || raw === null) return false;
  const type = (raw as { type?: unknown }).type;
  return type === "hello" || type === "snapshot" || type === "rejected";
}
