import { describe, expect, it } from "vitest";
import { isPanelMessage, parsePanelRequest } from "../../../extension/protocol/panelProtocol";

describe("panel protocol", () => {
  it("accepts the known requests", () => {
    expect(parsePanelRequest({ type: "ready" })).toEqual({ ok: true, request: { type: "ready" } });
    expect(parsePanelRequest({ type: "toggle" })).toEqual({ ok: true, request: { type: "toggle" } });
    expect(parsePanelRequest({ type: "setRunApps", allow: true })).toEqual({ ok: true, request: { type: "setRunApps", allow: true } });
    expect(parsePanelRequest({ type: "setRunApps", allow: false })).toEqual({ ok: true, request: { type: "setRunApps", allow: false } });
  });

  it.each([
    [null, /not an object/],
    ["ready", /not an object/],
    [[{ type: "ready" }], /not an object/],
    [{}, /unknown message type undefined/],
    [{ type: "rm -rf" }, /unknown message type "rm -rf"/],
    [{ type: 42 }, /unknown message type 42/],
    [{ type: "toggle", jobId: "x" }, /unexpected field\(s\) jobId/],
    [{ type: "setRunApps" }, /needs allow: true or false/],
    [{ type: "setRunApps", allow: "yes" }, /needs allow: true or false/],
    [{ type: "setRunApps", allow: 1 }, /needs allow: true or false/],
    [{ type: "setRunApps", allow: true, scope: "workspace" }, /unexpected field\(s\) scope/],
  ])("refuses %j with a reason", (raw, reason) => {
    const parsed = parsePanelRequest(raw);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.reason).toMatch(reason);
  });

  it("recognises only the extension's own messages on the webview side", () => {
    expect(isPanelMessage({ type: "hello", version: "1", snapshot: {} })).toBe(true);
    expect(isPanelMessage({ type: "toggle" })).toBe(false);
    expect(isPanelMessage("hello")).toBe(false);
  });
});

describe("panel protocol: job actions", () => {
  it("accepts a well-formed job id", () => {
    expect(parsePanelRequest({ type: "retryDead", jobId: "k57abc123" })).toEqual({ ok: true, request: { type: "retryDead", jobId: "k57abc123" } });
  });

  it.each([
    [{ type: "retryDead" }, /needs a jobId/],
    [{ type: "purgeDead", jobId: 7 }, /needs a jobId/],
    [{ type: "cancelJob", jobId: "'; drop table jobs; --" }, /needs a jobId/],
    [{ type: "cancelJob", jobId: "a".repeat(65) }, /needs a jobId/],
    [{ type: "retryDead", jobId: "k57", force: true }, /unexpected field\(s\) force/],
    [{ type: "toString" }, /unknown message type/],
    [{ type: "__proto__" }, /unknown message type/],
  ])("refuses %j", (raw, reason) => {
    const parsed = parsePanelRequest(raw);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.reason).toMatch(reason);
  });
});
