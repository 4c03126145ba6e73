import { afterEach, expect, test, vi } from "vitest";
import { newBackend } from "../setup";
import { PUBLIC_FUNCTIONS, type Worlds } from "./catalogue";
import { checkConsistency } from "./consistency";
import { INJECTION, UNICODE, type Expect } from "./garbage";
import { fullSnapshot } from "./judge";
import { malformedCall } from "./mutate";
import { KNOWN_CODES } from "./outcome";
import { seededRng, sweepSeed, type Rng } from "./prng";
import { buildOrgWorld } from "./world";

const SEED = sweepSeed(20261124);
const REQUESTS = 1_500;
const STATUS_BY_CODE: Record<string, number> = {
  bad_key: 401,
  revoked: 401,
  forbidden: 403,
  not_found: 404,
  invalid_argument: 400,
  too_large: 413,
  idempotency_mismatch: 409,
};

afterEach(() => {
  vi.useRealTimers();
});

type Request = { method: string; path: string; auth: string | null; body?: string; expect: Expect | "unauthorized" | "unauthorizedOrShape" | "ok"; lossy?: boolean; label: string };

/** Authorization headers: the good one, or one of many ways to get it wrong. */
function authHeader(rng: Rng, w: Worlds): { auth: string | null; good: boolean; label: string } {
  const good = w.a.farm.clientKey;
  const bad: Array<[string | null, string]> = [
    [null, "no header"],
    ["", "empty header"],
    ["Bearer", "Bearer alone"],
    ["Bearer ", "Bearer and a space"],
    [`Basic ${good}`, "Basic scheme"],
    [`Bearer ${good} extra`, "two tokens"],
    [`Bearer ${w.a.worker.apiKey}`, "a worker key"],
    [`Bearer ${w.a.freshToken}`, "an enrollment token"],
    [`Bearer ${w.a.revokedClientKey}`, "a revoked client key"],
    [`Bearer fh_c_${"A".repeat(43)}`, "an unknown client key"],
    [`Bearer ${rng.pick(INJECTION).replace(/[^\x21-\x7e]/g, "")}x`, "injection"],
    [`Bearer ${"fh_c_" + "é".repeat(43)}`, "unicode key"],
    [`Bearer ${good.slice(0, -1)}`, "truncated key"],
  ];
  if (rng.chance(0.65)) return { auth: rng.pick([`Bearer ${good}`, `bearer ${good}`, `Bearer   ${good}`]), good: true, label: "good key" };
  const [auth, label] = rng.pick(bad);
  return { auth, good: false, label };
}

/** Would this value reach the server unchanged through JSON? (NaN, -0, undefined, functions, bigints do not.) */
function survivesJson(value: unknown): boolean {
  try {
    return sameValue(JSON.parse(JSON.stringify(value)), value);
  } catch {
    return false;
  }
}

function sameValue(a: unknown, b: unknown): boolean {
  if (typeof a !== "object" || a === null || typeof b !== "object" || b === null) return Object.is(a, b);
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return ka.length === kb.length && ka.every((k) => sameValue((a as never)[k], (b as never)[k]));
}

function submitBody(rng: Rng, w: Worlds): { body: string; expect: Expect; label: string; lossy?: boolean } {
  const roll = rng.next();
  if (roll < 0.15) {
    const [body, label] = rng.pick<[string, string]>([
      ["{not json", "not JSON"],
      ["", "empty body"],
      ["null", "null"],
      ["[]", "an array"],
      ['[{"type":"x"}]', "an array of jobs"],
      ["5", "a number"],
      ['"text"', "a string"],
      ["true", "a boolean"],
      ['{"type":"x"', "cut off"],
      ['{"type":"x"}{"type":"y"}', "two objects"],
      ['{"jobs":"x"}', "jobs not an array"],
      ['{"jobs":[1,2]}', "jobs of numbers"],
      ['{"type":"x","payload":{"__proto__":{"polluted":true}}}', "__proto__ payload"],
    ]);
    const legal = label === "__proto__ payload";
    return { body, expect: legal ? "either" : "reject", label };
  }
  const fn = rng.pick(PUBLIC_FUNCTIONS.filter((f) => f.name === "jobs:submit" || f.name === "jobs:submitBatch"));
  let call = malformedCall(fn, w, rng);
  while (call.args.clientKey !== w.a.farm.clientKey) call = malformedCall(fn, w, rng); // the key goes in the header
  const fields = { ...call.args };
  delete fields.clientKey;
  // values JSON cannot carry (NaN, -0, undefined, bigint) reach the server changed: no fixed expectation
  if (!survivesJson(fields)) return { body: safeStringify(fields), expect: "either", lossy: true, label: `${fn.name} ${call.label} (lossy JSON)` };
  return { body: safeStringify(fields), expect: call.expect, label: `${fn.name} ${call.label}` };
}

function safeStringify(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => (typeof v === "bigint" ? `${v}` : v)) ?? "";
}

function jobPath(rng: Rng, w: Worlds): { id: string; expect: Expect | "ok"; label: string } {
  const roll = rng.next();
  if (roll < 0.3) return { id: String(rng.pick(Object.values(w.a.jobs))), expect: "ok", label: "own job" };
  const others: Array<[string, string]> = [
    [String(rng.pick(Object.values(w.b.jobs))), "another org's job"],
    [String(rng.pick(Object.values(w.a.otherIds))), "another table's id"],
    ["", "no id"],
    [encodeURIComponent("../../etc/passwd"), "encoded path traversal"],
    ["..%2F..%2F", "encoded slashes"],
    [encodeURIComponent(rng.pick(INJECTION)), "encoded injection"],
    [encodeURIComponent(rng.pick(UNICODE)), "encoded unicode"],
    ["a".repeat(10_000), "10 000 characters"],
    [`${w.a.jobs.pending}/extra`, "an extra segment"],
    [`${w.a.jobs.pending}%00`, "a NUL after the id"],
  ];
  const [id, label] = rng.pick(others);
  return { id, expect: "notFound", label };
}

function randomRequest(rng: Rng, w: Worlds): Request {
  const { auth, good, label: authLabel } = authHeader(rng, w);
  const route = rng.int(3);
  let request: Request;
  if (route === 0) {
    const { body, expect, label, lossy } = submitBody(rng, w);
    request = { method: "POST", path: "/api/jobs", auth, body, expect, lossy, label: `POST /api/jobs ${label}` };
  } else {
    const { id, expect, label } = jobPath(rng, w);
    const cancel = route === 2;
    request = {
      method: cancel ? "POST" : "GET",
      path: `/api/jobs/${id}${cancel ? "/cancel" : ""}`,
      auth,
      body: cancel && rng.chance(0.3) ? '{"force":true}' : undefined,
      expect,
      label: `${cancel ? "cancel" : "get"} ${label}`,
    };
  }
  if (!good) {
    // Shape checks that read no data (a path that is not a job id, a body that is not a job spec) may
    // answer before the key is looked at; everything else must be a 401.
    const shapeError = request.expect === "reject" || request.expect === "notFound" || request.lossy === true;
    return { ...request, expect: shapeError ? "unauthorizedOrShape" : "unauthorized", label: `${request.label} with ${authLabel}` };
  }
  return request;
}

/** What is wrong with this answer to this request, or null. */
async function judge(request: Request, response: Response): Promise<string | null> {
  if (response.status >= 500) return `answered ${response.status}`;
  const text = await response.text();
  let body: { error?: { code?: unknown; message?: unknown }; jobId?: unknown; jobIds?: unknown; status?: unknown };
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    return `answered ${response.status} with a body that is not JSON: ${text.slice(0, 100)}`;
  }
  if (response.status >= 400) {
    const code = body.error?.code;
    if (typeof code !== "string" || !KNOWN_CODES.has(code) || typeof body.error?.message !== "string") {
      return `answered ${response.status} without a clear error: ${text.slice(0, 200)}`;
    }
    if (STATUS_BY_CODE[code] !== response.status) return `code ${code} came with status ${response.status}`;
    if (request.expect === "unauthorized" && response.status !== 401) return `bad auth answered ${response.status} ${code}`;
    if (request.expect === "unauthorizedOrShape" && ![400, 401, 404].includes(response.status)) {
      return `bad auth answered ${response.status} ${code}`;
    }
    if (request.expect === "notFound" && response.status !== 404) return `a foreign id answered ${response.status} ${code}`;
    if (request.expect === "ok") return `own job answered ${response.status} ${code}`;
    return null;
  }
  if (request.expect !== "either" && request.expect !== "ok") {
    return `accepted: ${response.status} ${text.slice(0, 200)}`;
  }
  if (request.path === "/api/jobs") {
    const ok = response.status === 201 && (typeof body.jobId === "string" || Array.isArray(body.jobIds));
    return ok ? null : `submit answered ${response.status} ${text.slice(0, 200)}`;
  }
  return response.status === 200 && typeof body.status === "string" ? null : `answered ${response.status} ${text.slice(0, 200)}`;
}

test(`the HTTP API answers ${REQUESTS} malformed requests with a 4xx JSON error (or a correct success), never a 5xx`, async () => {
  vi.useFakeTimers();
  const t = newBackend();
  const w: Worlds = { a: await buildOrgWorld(t, "a"), b: await buildOrgWorld(t, "b") };
  const otherOrgBefore = await fullSnapshot(t).then((s) => JSON.stringify(s.jobs.filter((j) => (j as { orgId: string }).orgId === w.b.farm.orgId)));
  const rng = seededRng(SEED);
  const problems: string[] = [];
  const statuses = new Map<number, number>();
  for (let i = 0; i < REQUESTS; i++) {
    const request = randomRequest(rng, w);
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (request.auth !== null) headers.authorization = request.auth;
    let problem: string | null;
    try {
      const response = await t.fetch(request.path, { method: request.method, headers, body: request.body });
      statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
      problem = await judge(request, response);
    } catch (error) {
      problem = `threw ${error instanceof Error ? error.message.slice(0, 200) : String(error)}`;
    }
    if (problem) problems.push(`${request.method} ${request.path.slice(0, 80)} [${request.label.slice(0, 160)}]: ${problem} (seed ${SEED})`);
  }
  console.log(`HTTP sweep (seed ${SEED}): ${[...statuses].sort().map(([s, n]) => `${s}×${n}`).join(", ")}`);
  expect(problems.slice(0, 20)).toEqual([]);
  expect(statuses.get(201)).toBeGreaterThan(0);
  expect(statuses.get(401)).toBeGreaterThan(0);
  expect(statuses.get(404)).toBeGreaterThan(0);
  expect(statuses.get(400)).toBeGreaterThan(0);
  const otherOrgAfter = await fullSnapshot(t).then((s) => JSON.stringify(s.jobs.filter((j) => (j as { orgId: string }).orgId === w.b.farm.orgId)));
  expect(otherOrgAfter).toEqual(otherOrgBefore);
  expect(await checkConsistency(t)).toEqual([]);
});

test("methods and paths outside the API are refused with a 4xx", async () => {
  const t = newBackend();
  for (const [method, path] of [
    ["PUT", "/api/jobs"],
    ["DELETE", "/api/jobs/abc"],
    ["PATCH", "/api/jobs/abc"],
    ["GET", "/api/jobs"],
    ["GET", "/api/job"],
    ["GET", "/"],
    ["POST", "/api"],
  ]) {
    const response = await t.fetch(path, { method });
    expect(response.status, `${method} ${path}`).toBeGreaterThanOrEqual(400);
    expect(response.status, `${method} ${path}`).toBeLessThan(500);
  }
});
