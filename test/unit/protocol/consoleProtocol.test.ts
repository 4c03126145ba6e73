import { describe, expect, it } from "vitest";
import {
  alsoRevokesText,
  cacheHitsText,
  bulkStatusText,
  describeJobFilter,
  fairnessWeightsOfText,
  fairnessWeightsText,
  isConsoleMessage,
  overviewAt,
  parseConsoleRequest,
  resultImages,
  shareOfFinished,
  tokenStateAt,
  workerStateAt,
} from "../../../extension/protocol/consoleProtocol";

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
      { type: "invalidateCache", jobType: "demo.echo" },
      { type: "invalidateCache", jobType: "app.mandelbrot" },
      { type: "setCacheUnvalidated", on: true },
      { type: "setCacheUnvalidated", on: false },
      { type: "createToken", capabilities: ["demo.echo", "ollama:*"], slots: 4, ttlHours: 24, canManage: false },
      { type: "createToken", capabilities: ["demo.echo"], slots: 1, ttlHours: 1, canManage: false, donor: "alice" },
      { type: "createToken", capabilities: [], slots: 1, ttlHours: 1, canManage: false, donor: "d".repeat(128) },
      { type: "createClientKey", name: "nightly builds", canPublish: false },
      { type: "createClientKey", name: "n".repeat(100), canPublish: true },
      { type: "createOperatorKey", name: "alice's laptop" },
      { type: "revokeOperatorKey", operatorKeyId: "kx7abc" },
      { type: "saveImage", jobId: "k57abc123", field: "png" },
      { type: "filter", filter: { clientKeyId: "kx7abc", fairnessKey: "tenant-7" } },
      { type: "filter", filter: { fairnessKey: "é".repeat(32) } },
      { type: "setClientKeyLimits", clientKeyId: "kx7abc", weight: 3, maxRunning: 20, fairnessWeights: [{ fairnessKey: "gold", weight: 4 }] },
      { type: "setClientKeyLimits", clientKeyId: "kx7abc", weight: null, maxRunning: null, fairnessWeights: null },
      { type: "setClientKeyLimits", clientKeyId: "kx7abc", weight: 0.001, maxRunning: 0, fairnessWeights: [] },
      { type: "loadFairnessWeights", clientKeyId: "kx7abc" },
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
      { type: "invalidateCache" },
      { type: "invalidateCache", jobType: "" },
      { type: "invalidateCache", jobType: 5 },
      { type: "invalidateCache", jobType: "x".repeat(257) },
      { type: "invalidateCache", jobType: "x", filter: {} },
      { type: "setCacheUnvalidated" },
      { type: "setCacheUnvalidated", on: "yes" },
      { type: "setCacheUnvalidated", on: 1 },
      { type: "createToken", capabilities: ["GPU"], slots: 1, ttlHours: 1, canManage: false },
      { type: "createToken", capabilities: ["cpu"], slots: 0, ttlHours: 1, canManage: false },
      { type: "createToken", capabilities: ["cpu"], slots: 1.5, ttlHours: 1, canManage: false },
      { type: "createToken", capabilities: ["cpu"], slots: 1, ttlHours: 9_000, canManage: false },
      { type: "createToken", capabilities: ["cpu"], slots: 1, ttlHours: 1, canManage: "yes" },
      { type: "createToken", capabilities: "cpu", slots: 1, ttlHours: 1, canManage: true },
      { type: "createToken", capabilities: ["cpu"], slots: 1, ttlHours: 1, canManage: true, donor: "" },
      { type: "createToken", capabilities: ["cpu"], slots: 1, ttlHours: 1, canManage: true, donor: "   " },
      { type: "createToken", capabilities: ["cpu"], slots: 1, ttlHours: 1, canManage: true, donor: "d".repeat(129) },
      { type: "createToken", capabilities: ["cpu"], slots: 1, ttlHours: 1, canManage: true, donor: 7 },
      { type: "createClientKey", name: "ci" },
      { type: "createClientKey", name: "   ", canPublish: false },
      { type: "createClientKey", name: "n".repeat(101), canPublish: false },
      { type: "createClientKey", name: "ci", canPublish: "true" },
      { type: "createClientKey", name: 5, canPublish: false },
      { type: "createClientKey", name: "ci", canPublish: false, key: "fh_c_x" },
      { type: "createOperatorKey" },
      { type: "createOperatorKey", name: "" },
      { type: "createOperatorKey", name: "ops", orgId: "x" },
      { type: "revokeOperatorKey", operatorKeyId: "../x" },
      { type: "revokeOperatorKey" },
      { type: "saveImage", jobId: "k57abc123" },
      { type: "saveImage", jobId: "k57abc123", field: "../../.ssh/id_rsa" },
      { type: "saveImage", jobId: "k57 abc", field: "png" },
      { type: "saveImage", jobId: "k57abc123", field: "png", path: "/etc/passwd" },
      { type: "setClientKeyLimits", clientKeyId: "kx7abc", weight: 0, maxRunning: null, fairnessWeights: null },
      { type: "setClientKeyLimits", clientKeyId: "kx7abc", weight: 1001, maxRunning: null, fairnessWeights: null },
      { type: "setClientKeyLimits", clientKeyId: "kx7abc", weight: null, maxRunning: -1, fairnessWeights: null },
      { type: "setClientKeyLimits", clientKeyId: "kx7abc", weight: null, maxRunning: 2.5, fairnessWeights: null },
      { type: "setClientKeyLimits", clientKeyId: "kx7abc", weight: 1, maxRunning: null },
      { type: "setClientKeyLimits", clientKeyId: "../x", weight: 1, maxRunning: null, fairnessWeights: null },
      { type: "setClientKeyLimits", clientKeyId: "kx7abc", weight: 1, maxRunning: null, fairnessWeights: [{ fairnessKey: "a", weight: 1 }, { fairnessKey: "a", weight: 2 }] },
      { type: "setClientKeyLimits", clientKeyId: "kx7abc", weight: 1, maxRunning: null, fairnessWeights: [{ fairnessKey: "k".repeat(65), weight: 1 }] },
      { type: "setClientKeyLimits", clientKeyId: "kx7abc", weight: 1, maxRunning: null, fairnessWeights: [{ fairnessKey: "a", weight: 1, extra: true }] },
      { type: "setClientKeyLimits", clientKeyId: "kx7abc", weight: 1, maxRunning: null, fairnessWeights: Array.from({ length: 1001 }, (_, i) => ({ fairnessKey: `u${i}`, weight: 1 })) },
      { type: "loadFairnessWeights", clientKeyId: "" },
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
      [{ clientKeyId: "../x" }, /clientKeyId/],
      [{ fairnessKey: "" }, /fairnessKey of 1 to 64 bytes/],
      [{ fairnessKey: "€".repeat(22) }, /fairnessKey of 1 to 64 bytes/],
      [{ status: "dead", orgId: "x" }, /unknown filter field orgId/],
    ];
    for (const [filter, why] of refusals) {
      const parsed = parseConsoleRequest({ type: "filter", filter });
      expect(parsed.ok, JSON.stringify(filter)).toBe(false);
      if (!parsed.ok) expect(parsed.reason, JSON.stringify(filter)).toMatch(why);
    }
  });

  it("refuses numbers that are not numbers, wrong types, extra keys and oversized text or lists, naming the field", () => {
    const limits = (fields: Record<string, unknown>) => ({ type: "setClientKeyLimits", clientKeyId: "kx7abc", weight: 1, maxRunning: null, fairnessWeights: null, ...fields });
    const token = (fields: Record<string, unknown>) => ({ type: "createToken", capabilities: ["cpu"], slots: 1, ttlHours: 1, canManage: false, ...fields });
    const refusals: Array<[unknown, RegExp]> = [
      [limits({ weight: Number.NaN }), /^"setClientKeyLimits" needs weight null or from 0.001 to 1000$/],
      [limits({ weight: Number.POSITIVE_INFINITY }), /needs weight/],
      [limits({ weight: "3" }), /needs weight/],
      [limits({ maxRunning: Number.NaN }), /needs maxRunning/],
      [limits({ maxRunning: Number.POSITIVE_INFINITY }), /needs maxRunning/],
      [limits({ maxRunning: 1_000_001 }), /needs maxRunning null or a whole number from 0 to 1000000/],
      [limits({ fairnessWeights: [{ fairnessKey: "a", weight: Number.NaN }] }), /fairnessWeights entries/],
      [limits({ fairnessWeights: [{ fairnessKey: "a", weight: Number.NEGATIVE_INFINITY }] }), /fairnessWeights entries/],
      [limits({ fairnessWeights: [{ fairnessKey: "a" }] }), /fairnessWeights entries/],
      [limits({ fairnessWeights: ["a=1"] }), /fairnessWeights entries/],
      [limits({ fairnessWeights: { a: 1 } }), /needs fairnessWeights null or at most 1000 entries/],
      [limits({ fairnessWeights: [{ fairnessKey: "a", weight: 1 }, { fairnessKey: "a", weight: 2 }] }), /names the fairness key "a" twice/],
      [token({ slots: Number.NaN }), /needs slots from 1 to 32/],
      [token({ ttlHours: Number.POSITIVE_INFINITY }), /needs ttlHours/],
      [token({ ttlHours: "24" }), /needs ttlHours/],
      [token({ capabilities: [7] }), /needs capabilities/],
      [token({ capabilities: Array.from({ length: 257 }, (_, i) => `c${i}`) }), /needs capabilities/],
      [token({ donor: "d".repeat(129) }), /needs a donor of 1 to 128 characters/],
      [{ type: "createOperatorKey", name: "n".repeat(101) }, /needs a name of 1 to 100 characters/],
      [{ type: "saveImage", jobId: "k57", field: "f".repeat(65) }, /needs a result field name/],
      [{ type: "filter", filter: { from: Number.NaN } }, /from to be a time/],
      [{ type: "filter", filter: { to: Number.NEGATIVE_INFINITY } }, /to to be a time/],
      // a field left out says what it needs; extra keys are named, the first five of them
      [{ type: "retryJob" }, /^"retryJob" needs a job id$/],
      [limits({ fairnessWeights: undefined }), /needs fairnessWeights null/],
      [{ type: "ready", a: 1, b: 2, c: 3, d: 4, e: 5, f: 6 }, /^unexpected field\(s\) a, b, c, d, e in "ready"$/],
      [{ type: "retryJob", jobId: "k57", __proto__: { jobId: "x" }, admin: true }, /unexpected field\(s\) admin/],
      [{ type: "toString" }, /unknown message type "toString"/],
      [{ type: "__proto__" }, /unknown message type/],
      [{ type: 7 }, /unknown message type 7/],
    ];
    for (const [raw, why] of refusals) {
      const parsed = parseConsoleRequest(raw);
      expect(parsed.ok, JSON.stringify(raw)?.slice(0, 200)).toBe(false);
      if (!parsed.ok) expect(parsed.reason, JSON.stringify(raw)?.slice(0, 200)).toMatch(why);
    }
  });

  it("passes on only what it checked: the request is a new object of the schema's fields", () => {
    const raw = { type: "createToken", capabilities: ["cpu"], slots: 2, ttlHours: 3, canManage: true, donor: "alice" };
    const parsed = parseConsoleRequest(raw);
    expect(parsed).toEqual({ ok: true, request: raw });
    if (parsed.ok && parsed.request.type === "createToken") {
      expect(parsed.request).not.toBe(raw);
      expect(parsed.request.capabilities).not.toBe(raw.capabilities);
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
    expect(describeJobFilter({ clientKeyId: "kx7abc", fairnessKey: "u1", status: "pending" }, "ci")).toBe("with client key ci, fairness key u1, status pending");
  });

  it("a bulk action's status line names the filter it ran on", () => {
    expect(bulkStatusText({ action: "cancel", affected: 366, scanned: 366, done: true }, { status: "pending", type: "demo.echo" })).toBe(
      "cancel: 366 job(s) changed of 366 looked at — done (jobs with status pending, type demo.echo)",
    );
    expect(bulkStatusText({ action: "retry", affected: 2, scanned: 40, done: false }, {})).toBe("retry: 2 job(s) changed of 40 looked at… (jobs in the farm)");
    expect(bulkStatusText(null, { clientKeyId: "k1" }, "ci")).toBe("Starting… (jobs with client key ci)");
  });

  it("the webview takes only the extension's message types", () => {
    expect(isConsoleMessage({ type: "state", state: { page: "overview", filter: {} } })).toBe(true);
    expect(isConsoleMessage({ type: "secret", kind: "client", secret: "fh_c_x" })).toBe(true);
    expect(isConsoleMessage({ type: "fairnessWeights", clientKeyId: "kx7abc", entries: [] })).toBe(true);
    expect(isConsoleMessage({ type: "eval", code: "1" })).toBe(false);
    expect(isConsoleMessage(null)).toBe(false);
  });
});

describe("the console derives what time changes from the timestamps the farm answers", () => {
  const overview = {
    counts: { pending: 1, running: 0, succeeded: 0, canceled: 0, dead: 0 },
    onlineUntil: [10_000, 400_000],
    onlineUnlisted: 0,
    workers: 2,
    throughput: [{ minuteStart: 0, finished: 1, failed: 0 }, { minuteStart: 3_600_000, finished: 2, failed: 1 }],
    queueWait: null,
    oldestReadyAt: 5_000,
    clientKeys: [{ clientKeyId: "k1", name: "ci", weight: 3, maxRunning: 20, running: 20, waiting: 5, shareLastHour: 0.75, oldestReadyAt: 4_000, finished: { succeeded: 0, dead: 0, canceled: 0 } }],
    waitsByType: [],
    finished: { succeeded: 0, dead: 0, canceled: 0 },
    cacheHits: 0,
  };

  it("workers online, the oldest job's wait (of the farm and of each client key) and the last hour move on as time passes", () => {
    const keysAt = (now: number) => [{ ...overview.clientKeys[0], oldestWaitingMs: now - 4_000 }];
    expect(overviewAt(overview, 6_000)).toEqual({ workersOnline: 2, oldestWaitingMs: 1_000, throughput: overview.throughput, clientKeys: keysAt(6_000) });
    expect(overviewAt(overview, 3_700_000)).toEqual({ workersOnline: 0, oldestWaitingMs: 3_695_000, throughput: [overview.throughput[1]], clientKeys: keysAt(3_700_000) });
    expect(overviewAt({ ...overview, clientKeys: [{ ...overview.clientKeys[0], oldestReadyAt: null }] }, 6_000).clientKeys[0].oldestWaitingMs).toBeNull();
    expect(overviewAt({ ...overview, oldestReadyAt: null }, 6_000).oldestWaitingMs).toBeNull();
  });

  it("a large farm's workers online beyond those listed count too", () => {
    expect(overviewAt({ ...overview, onlineUnlisted: 9_801 }, 6_000).workersOnline).toBe(9_803);
  });

  it("a client key's share is its part of the jobs that ended, 0 before any ended", () => {
    const key = (succeeded: number, dead: number, canceled: number) => ({ finished: { succeeded, dead, canceled } });
    expect(shareOfFinished(key(3, 1, 0), { succeeded: 6, dead: 1, canceled: 1 })).toBe(0.5);
    expect(shareOfFinished(key(0, 0, 0), { succeeded: 0, dead: 0, canceled: 0 })).toBe(0);
  });

  it("the cache figure is the hits so far and their part of the jobs that succeeded", () => {
    expect(cacheHitsText({ cacheHits: 0, finished: { succeeded: 7, dead: 0, canceled: 0 } })).toBe("none yet");
    expect(cacheHitsText({ cacheHits: 500, finished: { succeeded: 1_000, dead: 3, canceled: 1 } })).toBe("500 of 1000 succeeded (50 %)");
    expect(cacheHitsText({ cacheHits: 1, finished: { succeeded: 3, dead: 0, canceled: 0 } })).toBe("1 of 3 succeeded (33 %)");
    // dead and canceled jobs are not what a hit is a part of
    expect(cacheHitsText({ cacheHits: 2, finished: { succeeded: 4, dead: 4, canceled: 4 } })).toBe("2 of 4 succeeded (50 %)");
  });

  it("a worker goes offline when its window passes; a token expires when its time comes", () => {
    expect(workerStateAt({ revoked: false, onlineUntil: 100 }, 99)).toBe("online");
    expect(workerStateAt({ revoked: false, onlineUntil: 100 }, 100)).toBe("offline");
    expect(workerStateAt({ revoked: true, onlineUntil: null }, 0)).toBe("revoked");
    expect(tokenStateAt({ state: "open", expiresAt: 100 }, 99)).toBe("open");
    expect(tokenStateAt({ state: "open", expiresAt: 100 }, 100)).toBe("expired");
    expect(tokenStateAt({ state: "used", expiresAt: 100 }, 200)).toBe("used");
  });
});

describe("fairness weights as the Access page's form writes them", () => {
  it("reads key=weight entries, one a comma or a line, and writes them back the same way", () => {
    expect(fairnessWeightsOfText("gold=4, free = 0.5\nteam=a=2")).toEqual([
      { fairnessKey: "gold", weight: 4 },
      { fairnessKey: "free", weight: 0.5 },
      { fairnessKey: "team=a", weight: 2 },
    ]);
    expect(fairnessWeightsOfText("  ")).toEqual([]);
    expect(fairnessWeightsText([{ fairnessKey: "gold", weight: 4 }, { fairnessKey: "free", weight: 0.5 }])).toBe("gold=4, free=0.5");
  });

  it("says what is wrong with one the farm would refuse", () => {
    expect(fairnessWeightsOfText("gold")).toMatch(/not key=weight/);
    expect(fairnessWeightsOfText("=3")).toMatch(/not key=weight/);
    expect(fairnessWeightsOfText("gold=much")).toMatch(/weight/);
    expect(fairnessWeightsOfText("gold=4, gold=2")).toMatch(/twice/);
    expect(fairnessWeightsOfText("gold=0")).toMatch(/weight/);
  });
});

describe("a result that is an image", () => {
  const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
  it("finds the PNG fields of a result (the Mandelbrot app's png), and the result that is one", () => {
    expect(resultImages({ width: 1, height: 1, png })).toEqual([{ field: "png", base64: png }]);
    expect(resultImages(png)).toEqual([{ field: "result", base64: png }]);
  });
  it("finds none in text that is not a base64 PNG", () => {
    expect(resultImages({ png: "hello" })).toEqual([]);
    expect(resultImages({ png: png + "<script>" })).toEqual([]);
    expect(resultImages({ "../x": png })).toEqual([]);
    expect(resultImages([png])).toEqual([]);
    expect(resultImages(null)).toEqual([]);
    expect(resultImages({ nested: { png } })).toEqual([]);
  });
});

describe("the console's token grants follow the backend's one rule (convex/contract's isCapabilityGrant)", () => {
  const token = (capabilities: unknown) => parseConsoleRequest({ type: "createToken", capabilities, slots: 1, ttlHours: 1, canManage: false });
  it.each([
    [["*"], true],
    [["ollama:*"], true],
    [["demo.echo", "gpu:nvidia"], true],
    [["x".repeat(64)], true],
    [[""], false],
    [["x".repeat(65)], false],
    [["a*b"], false],
    [["**"], false],
    [["Ollama:*"], false],
  ])("%j is accepted: %s", (capabilities, accepted) => {
    expect(token(capabilities).ok).toBe(accepted);
  });

  it("accepts as many grants as a worker may hold, and no more", () => {
    const names = Array.from({ length: 257 }, (_, i) => `c${i}`);
    expect(token(names.slice(0, 256)).ok).toBe(true);
    expect(token(names).ok).toBe(false);
  });
});

describe("alsoRevokesText", () => {
  it("names what a revoke also revokes, kind by kind, and nothing when the key made nothing", () => {
    const none = { clientKeys: 0, operatorKeys: 0, enrollments: 0, workers: 0, more: false };
    expect(alsoRevokesText(none)).toBe("");
    expect(alsoRevokesText({ ...none, clientKeys: 1 })).toBe(" It also revokes what it created: 1 client key, and what those created.");
    expect(alsoRevokesText({ clientKeys: 2, operatorKeys: 1, enrollments: 3, workers: 4, more: false })).toBe(
      " It also revokes what it created: 2 client keys, 1 operator key, 3 unused enrollment tokens and 4 workers, and what those created.",
    );
    expect(alsoRevokesText({ ...none, clientKeys: 100, workers: 2, more: true })).toBe(" It also revokes what it created: 100+ client keys and 2 workers, and what those created.");
  });
});
