/**
 * The typed message protocol between the control-panel webview and the extension.
 * Shared by both sides (media/panel/main.ts imports it too); no 'vscode' import here.
 */
import * as v from "valibot";
import type { DonorState } from "../donorState/donorState";
import { message, parseMessage, type MessageOf } from "./webviewMessages";

/** The panel shows the donor state as it is: the same object every other surface reads. */
export type PanelSnapshot = DonorState;

const JOB_ID = /^[a-z0-9]{1,64}$/;

/** A Convex document id as a job id: lowercase letters and digits. */
export function isJobId(value: string): boolean {
  return JOB_ID.test(value);
}

/**
 * Every message the panel may send, by type (valibot schemas: the request type below is what they let through). Built
 * on the extension's first use: the webview only sends these, and its bundle then carries none of them.
 */
function requestSchemas() {
  const needs = "needs a jobId of lowercase letters and digits";
  const jobId = v.pipe(v.string(needs), v.regex(JOB_ID, needs));
  return {
    ready: message("ready", {}),
    toggle: message("toggle", {}),
    join: message("join", {}),
    snooze: message("snooze", {}),
    finishAndStop: message("finishAndStop", {}),
    fixPause: message("fixPause", {}),
    /** The apps switch: `allow` asks the donor's consent first (modal), then sets `farmhand.runApps` in the user settings. */
    setRunApps: message("setRunApps", { allow: v.boolean("needs allow: true or false") }),
    retryDead: message("retryDead", { jobId }),
    purgeDead: message("purgeDead", { jobId }),
    cancelJob: message("cancelJob", { jobId }),
  };
}
let requests: ReturnType<typeof requestSchemas> | undefined;

/** Webview → extension. Every one is validated (parsePanelRequest) before it is acted on. */
export type PanelRequest = MessageOf<ReturnType<typeof requestSchemas>>;

/** Extension → webview. */
export type PanelMessage =
  | { type: "hello"; version: string; snapshot: PanelSnapshot }
  | { type: "snapshot"; snapshot: PanelSnapshot }
  | { type: "rejected"; reason: string };

/** Validates a message that arrived from the webview; anything else is refused with the reason. */
export function parsePanelRequest(raw: unknown) {
  requests ??= requestSchemas();
  return parseMessage(requests, raw);
}

export function isPanelMessage(raw: unknown): raw is PanelMessage {
  if (typeof raw !== "object" || raw === null) return false;
  const type = (raw as { type?: unknown }).type;
  return type === "hello" || type === "snapshot" || type === "rejected";
}
