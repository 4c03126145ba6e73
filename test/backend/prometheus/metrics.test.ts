import { afterEach, expect, test, vi } from "vitest";
import { api, internal } from "../../../convex/_generated/api";
import { TIMING } from "../../../convex/core/limits";
import { submitJob } from "../../../convex/queue/submit";
import { advance, runDue } from "../queueState";
import { answerOf, enrollWorker, newFarm, refreshSummaries, TEST_TYPES, type Farm } from "../setup";
import { checkConsistency } from "../sweep/consistency";
import { getMetrics, samplesOf, scrapeSamples, sumOf } from "./scrapeText";

/**
 * GET /api/metrics: who may read it, and that what it says agrees with the jobs there are (every status, type
 * and client key), each end counted once, and the events that are not a job's status.
 */

afterEach(() => vi.useRealTimers());

async function operatorKey(farm: Farm, name = "prometheus") {
  return (await farm.t.mutation(internal.admin.createOperatorKey, { orgId: farm.orgId, name })).key;
}

async function clientKey(farm: Farm, name: string) {
  return (await farm.t.mutation(internal.admin.createClientKey, { orgId: farm.orgId, name })).key;
}

test("GET /api/metrics answers an operator key of the org, 401 without a key or with a bad one, 403 for other kinds of keys", async () => {
  const farm = await newFarm();
  const key = await operatorKey(farm);
  const worker = await enrollWorker(farm, { canManage: true });
  const ok = await getMetrics(farm.t, key);
  expect(ok.status).toBe(200);
  expect(ok.contentType).toBe("text/plain; version=0.0.4");
  expect(ok.text).toContain("# TYPE farmhand_jobs gauge");
  const refusals: Array<[string | null, number, string]> = [
    [null, 401, "bad_key"],
    ["not-a-key", 401, "bad_key"],
    [`fh_o_${"A".repeat(43)}`, 401, "bad_key"],
    [farm.clientKey, 403, "forbidden"],
    // a worker that may manage the farm opens the console, but the metrics take an operator key
    [worker.apiKey, 403, "forbidden"],
  ];
  for (const [bearer, status, code] of refusals) {
    const res = await farm.t.fetch("/api/metrics", { headers: bearer === null ? {} : { authorization: `Bearer ${bearer}` } });
    expect([bearer, res.status, (await answerOf(res)).error?.code]).toEqual([bearer, status, code]);
  }
  const revoked = await farm.t.mutation(internal.admin.createOperatorKey, { orgId: farm.orgId, name: "old" });
  await farm.t.mutation(internal.admin.revokeOperatorKey, { operatorKeyId: revoked.operatorKeyId });
  expect((await getMetrics(farm.t, revoked.key)).status).toBe(401);
});

test("job counts per status, type and client key are the jobs there are; each end is counted once, a purge takes nothing back", async () => {
  vi.useFakeTimers();
  const farm = await newFarm();
  const key = await operatorKey(farm);
  const ci = await clientKey(farm, "builds");
  const nightly = await clientKey(farm, "nightly");
  const w = await enrollWorker(farm, { maxConcurrentJobs: 8 });
  const submit = (clientKey: string, type: string, extra: Record<string, unknown> = {}) => farm.t.mutation(api.jobs.submit, { clientKey, type, ...extra });
  const claimOne = async () => (await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: TEST_TYPES }))[0];

  const done = await submit(ci, "render");
  await farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: (await claimOne()).leaseId, result: 1 });
  const dead = await submit(ci, "render", { maxAttempts: 1 });
  await farm.t.mutation(api.workers.fail, { apiKey: w.apiKey, leaseId: (await claimOne()).leaseId, error: "boom", retryable: false });
  const parent = await submit(ci, "render");
  await submit(nightly, "encode", { dependsOn: { jobs: [parent] } });
  const canceled = await submit(nightly, "train");
  await farm.t.mutation(api.jobs.cancel, { clientKey: nightly, jobId: canceled });
  await submit(nightly, "train", { priority: 5 });
  const running = await claimOne();
  expect(running.type).toBe("train");
  await farm.t.run(async (ctx) => void (await submitJob(ctx, { orgId: farm.orgId, type: "x" })));
  // the dead letter goes round again and succeeds; the first success is purged
  await farm.t.mutation(internal.admin.retryDead, { jobId: dead });
  await farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: (await claimOne()).leaseId, result: 2 });
  await farm.t.mutation(internal.admin.purge, { jobId: done });
  await refreshSummaries(farm.t);

  const samples = await scrapeSamples(farm.t, key);
  const clientIds = new Map(await farm.t.run(async (ctx) => (await ctx.db.query("clientKeys").collect()).map((k) => [k._id as string, k.name] as const)));
  const jobs = await farm.t.run(async (ctx) => await ctx.db.query("jobs").collect());
  const really = new Map<string, number>();
  for (const job of jobs) {
    const client = job.clientKeyId ? clientIds.get(job.clientKeyId)! : "none";
    const k = `${job.status}/${job.type}/${client}`;
    really.set(k, (really.get(k) ?? 0) + 1);
  }
  const exposed = new Map(samples.filter((s) => s.name === "farmhand_jobs" && s.value !== 0).map((s) => [`${s.labels.status}/${s.labels.type}/${s.labels.client}`, s.value]));
  expect(exposed).toEqual(really);
  expect(Object.fromEntries(samples.filter((s) => s.name === "farmhand_jobs_finished_total" && s.value !== 0).map((s) => [`${s.labels.outcome}/${s.labels.type}/${s.labels.client}`, s.value]))).toEqual({
    // two ends of render jobs succeeded (one since purged) and one died (before its retry), one train canceled
    "succeeded/render/builds": 2,
    "dead/render/builds": 1,
    "canceled/train/nightly": 1,
  });
  expect(sumOf(samples, "farmhand_retries_total")).toBe(0);
  expect(sumOf(samples, "farmhand_job_run_seconds_count", { type: "render" })).toBe(3);
  expect(sumOf(samples, "farmhand_job_wait_seconds_count", { type: "train" })).toBe(1);
  expect(await checkConsistency(farm.t)).toEqual([]);
});

test("another org's jobs never show in a scrape", async () => {
  const farm = await newFarm();
  const key = await operatorKey(farm);
  const other = await newFarm(farm.t, "globex");
  await other.t.mutation(api.jobs.submit, { clientKey: other.clientKey, type: "theirs" });
  await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "ours" });
  await refreshSummaries(farm.t);
  const samples = await scrapeSamples(farm.t, key);
  expect(samples.filter((s) => s.name === "farmhand_jobs" && s.value > 0).map((s) => s.labels.type)).toEqual(["ours"]);
  expect(samples.some((s) => s.labels.type === "theirs")).toBe(false);
});

test("retries, lease expiries and offer expiries are counted where they happen", async () => {
  vi.useFakeTimers();
  const farm = await newFarm();
  const key = await operatorKey(farm);
  const w = await enrollWorker(farm, { types: ["x"] });
  const silent = await enrollWorker(farm, { name: "silent", types: ["k"] });
  // an offer nobody claims: the silent worker waits for a job, is offered one, and says nothing
  await farm.t.mutation(api.workers.ready, { apiKey: silent.apiKey, capabilities: silent.capabilities, slots: 1 });
  await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "k" });
  await runDue(farm.t);
  await advance(farm.t, TIMING.offerTtlMs + 1);
  // a retryable failure with attempts left is a retry; the last attempt's failure is not
  await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x", maxAttempts: 2 });
  const [first] = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: w.capabilities });
  await farm.t.mutation(api.workers.fail, { apiKey: w.apiKey, leaseId: first.leaseId, error: "flaky" });
  await advance(farm.t, TIMING.backoffMaxMs);
  const [second] = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: w.capabilities });
  await farm.t.mutation(api.workers.fail, { apiKey: w.apiKey, leaseId: second.leaseId, error: "flaky" });
  // a lease that runs out: an expiry, and a retry
  await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x", leaseMs: 5_000 });
  await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: w.capabilities });
  await advance(farm.t, 6_000);
  await refreshSummaries(farm.t);
  const samples = await scrapeSamples(farm.t, key);
  expect(sumOf(samples, "farmhand_retries_total")).toBe(2);
  expect(sumOf(samples, "farmhand_lease_expiries_total")).toBe(1);
  expect(sumOf(samples, "farmhand_offer_expiries_total")).toBe(1);
  expect(sumOf(samples, "farmhand_jobs_finished_total", { outcome: "dead" })).toBe(1);
  expect(await checkConsistency(farm.t)).toEqual([]);
});

test("wait and run histograms per type: cumulative buckets, sums in seconds, and a p95 that tells slow waits from quick ones", async () => {
  vi.useFakeTimers();
  const farm = await newFarm();
  const key = await operatorKey(farm);
  const w = await enrollWorker(farm, { maxConcurrentJobs: 20 });
  // 18 quick waits of 2 s and 2 slow ones of 40 min; each runs 30 s
  for (let i = 0; i < 20; i++) {
    await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "render" });
    vi.advanceTimersByTime(i < 18 ? 2_000 : 40 * 60_000);
    const [c] = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: TEST_TYPES });
    vi.advanceTimersByTime(30_000);
    await farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: c.leaseId });
  }
  await refreshSummaries(farm.t);
  const samples = await scrapeSamples(farm.t, key);
  const buckets = samples.filter((s) => s.name === "farmhand_job_wait_seconds_bucket" && s.labels.type === "render");
  expect(buckets.at(-1)).toMatchObject({ labels: { le: "+Inf" }, value: 20 });
  expect(buckets.every((b, i) => i === 0 || b.value >= buckets[i - 1].value)).toBe(true);
  expect(buckets.find((b) => b.labels.le === "2")!.value).toBe(18);
  expect(buckets.find((b) => b.labels.le === "1800")!.value).toBe(18);
  expect(buckets.find((b) => b.labels.le === "2700")!.value).toBe(20);
  expect(sumOf(samples, "farmhand_job_wait_seconds_sum", { type: "render" })).toBe(18 * 2 + 2 * 2400);
  expect(sumOf(samples, "farmhand_job_run_seconds_sum", { type: "render" })).toBe(20 * 30);
  expect(sumOf(samples, "farmhand_job_run_seconds_count", { type: "render" })).toBe(20);
  // histogram_quantile(0.95) over these buckets lies between the two kinds of wait, p50 among the quick ones
  const quantile = (q: number) => {
    const rank = q * 20;
    const i = buckets.findIndex((b) => b.value >= rank);
    const lower = i === 0 ? 0 : Number(buckets[i - 1].labels.le);
    const below = i === 0 ? 0 : buckets[i - 1].value;
    return lower + ((Number(buckets[i].labels.le) - lower) * (rank - below)) / (buckets[i].value - below);
  };
  expect(quantile(0.5)).toBeGreaterThan(1.5);
  expect(quantile(0.5)).toBeLessThanOrEqual(2);
  expect(quantile(0.95)).toBeGreaterThan(1800);
  expect(quantile(0.95)).toBeLessThanOrEqual(2700);
});

test("labels are bounded: past the 100 busiest types and client keys the rest count as other, and nothing is lost", async () => {
  const farm = await newFarm();
  const key = await operatorKey(farm);
  const keys: string[] = [];
  for (let i = 0; i < 103; i++) keys.push(await clientKey(farm, `key-${String(i).padStart(3, "0")}`));
  // 105 types: type t<i> gets i + 1 jobs (the busiest have most); client keys take turns
  let n = 0;
  for (let i = 0; i < 105; i++) {
    const jobs = Array.from({ length: i < 5 ? 1 : 2 }, () => ({ type: `t${String(i).padStart(3, "0")}` }));
    await farm.t.mutation(api.jobs.submitBatch, { clientKey: keys[n++ % keys.length], jobs });
  }
  await refreshSummaries(farm.t);
  const samples = await scrapeSamples(farm.t, key);
  const jobs = samples.filter((s) => s.name === "farmhand_jobs");
  const types = new Set(jobs.map((s) => s.labels.type));
  const clients = new Set(jobs.map((s) => s.labels.client));
  expect(types.size).toBe(101);
  expect(types.has("other")).toBe(true);
  // the five quietest types are the ones that count as other
  expect(["t000", "t001", "t002", "t003", "t004"].some((t) => types.has(t))).toBe(false);
  expect(clients.size).toBe(101);
  expect(clients.has("other")).toBe(true);
  expect(sumOf(samples, "farmhand_jobs", { status: "pending" })).toBe(5 + 100 * 2);
  expect(sumOf(samples, "farmhand_jobs", { status: "pending", type: "other" })).toBe(5);
  // every series is unique
  const series = jobs.map((s) => JSON.stringify(s.labels));
  expect(new Set(series).size).toBe(series.length);
});

test("client labels stay unique: keys of one name, and keys named other or none, get their prefix", async () => {
  const farm = await newFarm();
  const key = await operatorKey(farm);
  const named = async (name: string) => {
    const k = await farm.t.mutation(internal.admin.createClientKey, { orgId: farm.orgId, name });
    await farm.t.mutation(api.jobs.submit, { clientKey: k.key, type: "x" });
    return k.key.slice(0, 9);
  };
  const [a, b, other, none] = [await named("ci"), await named("ci"), await named("other"), await named("none")];
  await farm.t.run(async (ctx) => void (await submitJob(ctx, { orgId: farm.orgId, type: "x" })));
  await refreshSummaries(farm.t);
  const labels = new Set((await scrapeSamples(farm.t, key)).filter((s) => s.name === "farmhand_jobs").map((s) => s.labels.client));
  expect(labels).toEqual(new Set([`ci (${a})`, `ci (${b})`, `other (${other})`, `none (${none})`, "none"]));
});

test("workers by state and their slots, as of the last summary", async () => {
  vi.useFakeTimers();
  const farm = await newFarm();
  const key = await operatorKey(farm);
  const enroll = async (name: string) => ({ name, ...(await enrollWorker(farm, { name, maxConcurrentJobs: 3 })) });
  const [busy, frozen, paused, idle, gone] = [await enroll("busy"), await enroll("frozen"), await enroll("paused"), await enroll("idle"), await enroll("gone")];
  const run = async (w: { apiKey: string }) => {
    await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x" });
    return (await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: TEST_TYPES }))[0];
  };
  await farm.t.mutation(api.workers.ready, { apiKey: busy.apiKey, capabilities: TEST_TYPES, slots: 3 });
  await run(busy);
  const cold = await run(frozen);
  await farm.t.mutation(api.workers.heartbeat, { apiKey: frozen.apiKey, leaseId: cold.leaseId, suspended: true });
  await farm.t.mutation(api.workers.ready, { apiKey: paused.apiKey, capabilities: TEST_TYPES, slots: 0 });
  await farm.t.mutation(api.workers.ready, { apiKey: idle.apiKey, capabilities: TEST_TYPES, slots: 2 });
  await farm.t.mutation(api.workers.ready, { apiKey: gone.apiKey, capabilities: TEST_TYPES, slots: 0, stopping: true });
  await refreshSummaries(farm.t);
  let samples = await scrapeSamples(farm.t, key);
  const states = () => Object.fromEntries(samples.filter((s) => s.name === "farmhand_workers").map((s) => [s.labels.state, s.value]));
  expect(states()).toEqual({ idle: 1, busy: 1, suspended: 1, paused: 1, offline: 1 });
  // busy: one running of 3 declared; idle: 2 declared; the frozen worker's and the paused one's are not free
  expect(Object.fromEntries(samples.filter((s) => s.name === "farmhand_slots").map((s) => [s.labels.state, s.value]))).toEqual({ busy: 2, free: 2 + 2 });
  // thawed, the frozen worker is busy again
  await farm.t.mutation(api.workers.heartbeat, { apiKey: frozen.apiKey, leaseId: cold.leaseId });
  await refreshSummaries(farm.t);
  samples = await scrapeSamples(farm.t, key);
  expect(states()).toMatchObject({ busy: 2, suspended: 0, idle: 1 });
  expect([idle.name, gone.name, paused.name]).toEqual(["idle", "gone", "paused"]);
});

test("a scrape parses: every sample line is well formed, every family declared once", async () => {
  const farm = await newFarm();
  const key = await operatorKey(farm);
  await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x" });
  await refreshSummaries(farm.t);
  const { text } = await getMetrics(farm.t, key);
  const types = text.split("\n").filter((l) => l.startsWith("# TYPE "));
  expect(new Set(types).size).toBe(types.length);
  expect(types.length).toBe(15);
  expect(samplesOf(text).length).toBeGreaterThan(0);
});
