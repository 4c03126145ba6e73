import { describe, expect, it } from "vitest";
import { isPanelMessage, parsePanelRequest } from "../../../extension/views/panelProtocol";

describe("panel protocol", () => {
  it("accepts the known requests", () => {
    expect(parsePanelRequest({ type: "ready" })).toEqual({ ok: true, request: { type: "ready" } });
    expect(parsePanelRequest({ type: "toggle" })).toEqual({ ok: true, request: { type: "toggle" } });
  });

  it.each([
    [null, /not an object/],
    ["ready", /not an object/],
    [[{ type: "ready" }], /not an object/],
    [{}, /unknown message type undefined/],
    [{ type: "rm -rf" }, /unknown message type "rm -rf"/],
    [{ type: 42 }, /unknown message type 42/],
    [{ type: "toggle", jobId: "x" }, /unexpected field\(s\) jobId/],
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
