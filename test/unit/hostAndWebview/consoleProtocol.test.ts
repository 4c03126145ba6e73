import { describe, expect, it } from "vitest";
import { describeJobFilter, isConsoleMessage, parseConsoleRequest } from "../../../extension/hostAndWebview/consoleProtocol";

describe("console messages from the webview are validated before anything acts on them", () => {
  it("accepts each well-formed request", () => {
    const good = [
      { type: "ready" },
      { type: "page", page: "workers" },
      { type: "filter", filter: { status: "dead" } },
      { type: "filter", filter: {} },
      { type: "filter", filter: { status: "pending", type: "demo.echo", batchId: "nightly-7", externalId: "order 12", from: 0, to: 1_800_000_000_000 } },
      { type: "filter", filter: { type: "t".repeat(128), batchId: "b".repeat(256), externalId: "e".repeat(256) } },
      { type: "jobsPage", to: "older" },
      { type: "jobsPage", to: "newest" },
      { type: "workersPage", to: "older" },
      { type: "workersPage", to: "newer" },
      { type: "openJob", jobId: "k57abc123" },
      { type: "openJob", jobId: null },
      { type: "retryJob", jobId: "k57abc123" },
      { type: "cancelJob", jobId: "k57abc123" },
      { type: "revokeWorker", workerId: "j9xyz" },
      { type: "revokeEnrollment", enrollmentId: "jd7abc" },
      { type: "revokeClientKey", clientKeyId: "kx7abc" },
      { type: "revokeClientKey", clientKeyId: "0000000000000000010006clientKeys" },
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
      { type: "filter", status: "dead" },
      { type: "filter" },
      { type: "filter", filter: null },
      { type: "filter", filter: [] },
      { type: "filter", filter: "status=dead" },
      { type: "jobsPage" },
      { type: "jobsPage", to: "oldest" },
      { type: "jobsPage", to: "older", cursor: "abc" },
      { type: "workersPage" },
      { type: "workersPage", to: "newest" },
      { type: "openJob", jobId: "../../etc" },
      { type: "retryJob", jobId: "k57-abc" },
      { type: "retryJob", jobId: "k57 abc" },
      { type: "retryJob", jobId: null },
      { type: "cancelJob", jobId: "x".repeat(65) },
      { type: "revokeWorker", workerId: 5 },
      { type: "revokeEnrollment" },
      { type: "revokeEnrollment", enrollmentId: "../x" },
      { type: "revokeEnrollment", enrollmentId: "jd7abc", clientKeyId: "kx7abc" },
      { type: "revokeClientKey", clientKeyId: "" },
      { type: "revokeClientKey", clientKeyId: ["kx7abc"] },
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

  it("refuses a job filter the server would refuse, or one it does not know, naming the field", () => {
    const refusals: Array<[unknown, RegExp]> = [
      [{ status: "failed" }, /status/],
      [{ status: null }, /status/],
      [{ type: "" }, /type/],
      [{ type: "   " }, /type/],
      [{ type: 5 }, /type/],
      [{ type: "t".repeat(129) }, /type of at most 128/],
      [{ batchId: "b".repeat(257) }, /batchId of at most 256/],
      [{ externalId: "e".repeat(257) }, /externalId of at most 256/],
      [{ externalId: null }, /externalId/],
      [{ from: -1 }, /from/],
      [{ from: 1.5 }, /from/],
      [{ from: Number.NaN }, /from/],
      [{ to: Number.POSITIVE_INFINITY }, /to/],
      [{ to: "2026-11-23" }, /to/],
      [{ to: 300_000_000_000_000 }, /to/],
      [{ from: 2_000, to: 1_000 }, /from before to/],
      [{ from: 1_000, to: 1_000 }, /from before to/],
      [{ workerId: "x" }, /unknown filter field workerId/],
      [{ status: "dead", orgId: "x" }, /unknown filter field orgId/],
    ];
    for (const [filter, why] of refusals) {
      const parsed = parseConsoleRequest({ type: "filter", filter });
      expect(parsed.ok, JSON.stringify(filter)).toBe(false);
      if (!parsed.ok) expect(parsed.reason, JSON.stringify(filter)).toMatch(why);
    }
  });

  it("a filter keeps exactly the fields given (none added, none dropped)", () => {
    const parsed = parseConsoleRequest({ type: "filter", filter: { type: "demo.echo", to: 5 } });
    expect(parsed).toEqual({ ok: true, request: { type: "filter", filter: { type: "demo.echo", to: 5 } } });
    if (parsed.ok && parsed.request.type === "filter") expect(Object.keys(parsed.request.filter)).toEqual(["type", "to"]);
  });

  it("describes a filter in words for the bulk questions", () => {
    expect(describeJobFilter({})).toBe("in the farm");
    expect(describeJobFilter({ status: "dead", type: "demo.echo", batchId: "b1", externalId: "x" })).toBe("with status dead, type demo.echo, batch b1, external id x");
    expect(describeJobFilter({ from: 0, to: 1 })).toMatch(/^with submitted from .+, submitted before .+$/);
  });

  it("the webview takes only the extension's message types", () => {
    expect(isConsoleMessage({ type: "state", state: { page: "overview", filter: {} } })).toBe(true);
    expect(isConsoleMessage({ type: "token", token: "fh_e_x" })).toBe(true);
    expect(isConsoleMessage({ type: "eval", code: "1" })).toBe(false);
    expect(isConsoleMessage(null)).toBe(false);
  });
});
