import { createHmac } from "node:crypto";
import { afterEach, expect, test, vi } from "vitest";
import { api, internal } from "../../convex/_generated/api";
import type { Id } from "../../convex/_generated/dataModel";
import { signatureHeader, WEBHOOK } from "../../convex/webhooks/webhooks";
import { enrollWorker, expectCode, newFarm, snapshot, type Enrolled, type Farm, TEST_TYPES } from "./setup";

afterEach(() => vi.useRealTimers());

const URL_ = "https://hooks.example.com/hook";

async function finish(farm: Farm, worker: Enrolled, jobId: Id<"jobs">, how: "complete" | "die") {
  const [c] = await farm.t.mutation(api.workers.claim, { apiKey: worker.apiKey, capabilities: TEST_TYPES });
  expect(c.jobId).toBe(jobId);
  if (how === "complete") await farm.t.mutation(api.workers.complete, { apiKey: worker.apiKey, leaseId: c.leaseId, result: 1 });
  else await farm.t.mutation(api.workers.fail, { apiKey: worker.apiKey, leaseId: c.leaseId, error: "x", retryable: false });
}

/** A fake-timed farm with a webhook on its client key and one job that ended (`how`), its delivery waiting. */
async function endedJobWithWebhook(how: "complete" | "die") {
  vi.useFakeTimers();
  const farm = await newFarm();
  const worker = await enrollWorker(farm);
  await farm.t.mutation(api.jobs.setWebhook, { clientKey: farm.clientKey, url: URL_ });
  const jobId = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "t", maxAttempts: 1 });
  await finish(farm, worker, jobId, how);
  const [row] = await deliveries(farm);
  return { farm, worker, jobId, row };
}

const deliveries = (farm: Farm) => farm.t.run(async (ctx) => await ctx.db.query("webhookDeliveries").collect());
const pendingRuns = (farm: Farm) =>
  farm.t.run(async (ctx) =>
    (await ctx.db.system.query("_scheduled_functions").collect()).filter((s) => s.name === "webhookDelivery:deliver" && s.state.kind === "pending"),
  );

test("the signature header is t=<seconds>,v1=<hex HMAC-SHA256 of \"<t>.<body>\"> keyed with the secret's UTF-8 bytes", async () => {
  const secret = "fh_h_ünïcode-secret";
  const body = '{"jobId":"abc","status":"succeeded"}';
  const expected = createHmac("sha256", Buffer.from(secret, "utf8")).update(`1700000000.${body}`).digest("hex");
  expect(await signatureHeader(secret, body, 1_700_000_000)).toBe(`t=1700000000,v1=${expected}`);
});

test("setWebhook answers a new secret each time, null removes it; only http(s) URLs", async () => {
  const farm = await newFarm();
  const first = await farm.t.mutation(api.jobs.setWebhook, { clientKey: farm.clientKey, url: URL_ });
  const second = await farm.t.mutation(api.jobs.setWebhook, { clientKey: farm.clientKey, url: "https://example.com/farm?x=1" });
  expect(first.secret).toMatch(/^fh_h_[A-Za-z0-9_-]{43}$/);
  expect(second.secret).not.toBe(first.secret);
  const rows = await farm.t.run(async (ctx) => await ctx.db.query("webhooks").collect());
  expect(rows.map((r) => [r.url, r.secret])).toEqual([["https://example.com/farm?x=1", second.secret]]);
  expect(await farm.t.mutation(api.jobs.setWebhook, { clientKey: farm.clientKey, url: null })).toEqual({ secret: null });
  expect(await farm.t.run(async (ctx) => await ctx.db.query("webhooks").collect())).toEqual([]);
  const before = await snapshot(farm.t);
  for (const url of ["ftp://x/y", "javascript:alert(1)", "not a url", "", "/relative", "http://user:pw@host/", "http://x/" + "a".repeat(WEBHOOK.urlChars)]) {
    await expectCode(farm.t.mutation(api.jobs.setWebhook, { clientKey: farm.clientKey, url }), url.length > WEBHOOK.urlChars ? "too_large" : "invalid_argument");
  }
  await expectCode(farm.t.mutation(api.jobs.setWebhook, { clientKey: "fh_c_nope", url: URL_ }), "bad_key");
  expect(await snapshot(farm.t)).toEqual(before);
});

test("a job remembers its client key; its end (succeeded, dead, canceled) schedules one delivery; submitJob's jobs get none", async () => {
  vi.useFakeTimers(); // the scheduled deliveries stay pending
  const farm = await newFarm();
  const worker = await enrollWorker(farm);
  await farm.t.mutation(api.jobs.setWebhook, { clientKey: farm.clientKey, url: URL_ });
  const done = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "t" });
  await finish(farm, worker, done, "complete");
  const [dead] = await farm.t.mutation(api.jobs.submitBatch, { clientKey: farm.clientKey, jobs: [{ type: "t", maxAttempts: 1 }] });
  await finish(farm, worker, dead, "die");
  const canceled = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "t" });
  await farm.t.mutation(api.jobs.cancel, { clientKey: farm.clientKey, jobId: canceled });
  const hostJob = await farm.t.run(async (ctx) => {
    const { submitJob } = await import("../../convex/queue/submit");
    return await submitJob(ctx, { orgId: farm.orgId, type: "host" });
  });
  await farm.t.mutation(api.jobs.cancel, { clientKey: farm.clientKey, jobId: hostJob });
  const jobs = await farm.t.run(async (ctx) => await ctx.db.query("jobs").collect());
  expect(jobs.find((j) => j._id === done)!.clientKeyId).toBeDefined();
  expect(jobs.find((j) => j._id === hostJob)!.clientKeyId).toBeUndefined();
  const rows = await deliveries(farm);
  expect(rows.map((r) => r.jobId).sort()).toEqual([done, dead, canceled].sort());
  expect(rows.every((r) => r.state === "pending" && r.attempts.length === 0)).toBe(true);
  expect(await pendingRuns(farm)).toHaveLength(3);
});

test("at most one delivery in flight per job: a job that ends again while one is sending is delivered once more after it", async () => {
  const { farm, worker, jobId, row } = await endedJobWithWebhook("die");
  const send = await farm.t.mutation(internal.webhooks.beginAttempt, { deliveryId: row._id });
  expect(send).toMatchObject({ url: URL_, jobStatus: "dead" });
  expect(JSON.parse(send!.body)).toMatchObject({ jobId, type: "t", status: "dead", error: "x" });
  expect(await farm.t.mutation(internal.webhooks.beginAttempt, { deliveryId: row._id })).toBeNull(); // in flight already
  // retried by an operator and dead again while the attempt is out
  await farm.t.mutation(internal.admin.retryDead, { jobId });
  await finish(farm, worker, jobId, "die");
  expect((await deliveries(farm))[0]).toMatchObject({ state: "sending", again: true });
  const runsBefore = (await pendingRuns(farm)).length;
  await farm.t.mutation(internal.webhooks.endAttempt, { deliveryId: row._id, at: Date.now(), ms: 5, status: 204, jobStatus: "dead" });
  expect((await deliveries(farm))[0]).toMatchObject({ state: "pending", attempts: [expect.objectContaining({ status: 204 })] });
  expect((await pendingRuns(farm)).length).toBe(runsBefore + 1);
});

test("failures back off (first retry within 30 s) and give up 24 hours after the first attempt", async () => {
  const { farm, row } = await endedJobWithWebhook("complete");
  const waits: number[] = [];
  for (let attempt = 0; attempt < 200; attempt++) {
    if (!(await farm.t.mutation(internal.webhooks.beginAttempt, { deliveryId: row._id }))) break;
    await farm.t.mutation(internal.webhooks.endAttempt, { deliveryId: row._id, at: Date.now(), ms: 1, status: 503, jobStatus: "succeeded" });
    const after = (await deliveries(farm))[0];
    if (after.state !== "pending") break;
    waits.push(after.nextAt! - Date.now());
    vi.setSystemTime(after.nextAt!);
  }
  const last = (await deliveries(farm))[0];
  expect(last.state).toBe("failed");
  expect(waits[0]).toBeLessThanOrEqual(30_000);
  expect(waits[0]).toBeGreaterThanOrEqual(15_000);
  expect(Math.max(...waits)).toBeLessThanOrEqual(WEBHOOK.retryMaxMs);
  const span = last.attempts.at(-1)!.at - last.attempts[0].at;
  expect(span).toBeLessThanOrEqual(WEBHOOK.giveUpAfterMs);
  expect(span).toBeGreaterThan(WEBHOOK.giveUpAfterMs - WEBHOOK.retryMaxMs);
});

test("a revoked key's or a purged job's delivery is dropped", async () => {
  const { farm, jobId, row } = await endedJobWithWebhook("complete");
  await farm.t.mutation(internal.admin.purge, { jobId }); // the delivery goes with the job
  expect(await farm.t.mutation(internal.webhooks.beginAttempt, { deliveryId: row._id })).toBeNull();
  expect(await deliveries(farm)).toEqual([]);

  const { key, clientKeyId } = await farm.t.mutation(internal.admin.createClientKey, { orgId: farm.orgId, name: "soon revoked" });
  await farm.t.mutation(api.jobs.setWebhook, { clientKey: key, url: URL_ });
  const other = await farm.t.mutation(api.jobs.submit, { clientKey: key, type: "t" });
  await farm.t.mutation(api.jobs.cancel, { clientKey: key, jobId: other });
  await farm.t.mutation(internal.admin.revokeClientKey, { clientKeyId });
  const row2 = (await deliveries(farm)).find((r) => r.jobId === other)!;
  expect(await farm.t.mutation(internal.webhooks.beginAttempt, { deliveryId: row2._id })).toBeNull();
  expect((await deliveries(farm)).find((r) => r.jobId === other)!.state).toBe("failed");
});
