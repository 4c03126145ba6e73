import { describe, expect, it } from "vitest";
import { isConsoleMessage, parseConsoleRequest } from "../../../extension/hostAndWebview/consoleProtocol";

describe("console messages from the webview are validated before anything acts on them", () => {
  it("accepts each well-formed request", () => {
    const good = [
      { type: "ready" },
      { type: "page", page: "workers" },
      { type: "filter", status: "dead" },
      { type: "filter", status: null },
      { type: "openJob", jobId: "k57abc123" },
      { type: "openJob", jobId: null },
      { type: "retryJob", jobId: "k57abc123" },
      { type: "cancelJob", jobId: "k57abc123" },
      { type: "revokeWorker", workerId: "j9xyz" },
      { type: "bulk", action: "retry" },
      { type: "bulk", action: "cancel" },
      { type: "purgeDead" },
      { type: "createToken", capabilities: ["demo.echo", "ollama:*"], slots: 4, ttlHours: 24, canManage: false },
    ];
    for (const request of good) expect(parseConsoleRequest(request)).toEqual({ ok: true, request });
  });

  it("refuses anything else, saying why", () => {
    const bad: unknown[] = [
      null,
      "ready",
      [],
      { type: "drop" },
      { type: "ready", extra: 1 },
      { type: "page", page: "settings" },
      { type: "filter", status: "failed" },
      { type: "filter" },
      { type: "openJob", jobId: "../../etc" },
      { type: "retryJob", jobId: "K57ABC" },
      { type: "retryJob", jobId: null },
      { type: "cancelJob", jobId: "x".repeat(65) },
      { type: "revokeWorker", workerId: 5 },
      { type: "bulk", action: "purge" },
      { type: "bulk" },
      { type: "purgeDead", filter: {} },
      { type: "createToken", capabilities: ["GPU"], slots: 1, ttlHours: 1, canManage: false },
      { type: "createToken", capabilities: ["cpu"], slots: 0, ttlHours: 1, canManage: false },
      { type: "createToken", capabilities: ["cpu"], slots: 1.5, ttlHours: 1, canManage: false },
      { type: "createToken", capabilities: ["cpu"], slots: 1, ttlHours: 9_000, canManage: false },
      { type: "createToken", capabilities: ["cpu"], slots: 1, ttlHours: 1, canManage: "yes" },
      { type: "createToken", capabilities: "cpu", slots: 1, ttlHours: 1, canManage: true },
    ];
    for (const raw of bad) {
      const parsed = parseConsoleRequest(raw);
      expect(parsed.ok, JSON.stringify(raw)).toBe(false);
      if (!parsed.ok) expect(parsed.reason.length).toBeGreaterThan(0);
    }
  });

  it("the webview takes only the extension's message types", () => {
    expect(isConsoleMessage({ type: "state", state: { page: "overview", status: null } })).toBe(true);
    expect(isConsoleMessage({ type: "token", token: "fh_e_x" })).toBe(true);
    expect(isConsoleMessage({ type: "eval", code: "1" })).toBe(false);
    expect(isConsoleMessage(null)).toBe(false);
  });
});
