import { afterEach, beforeEach, expect, test, vi } from "vitest";
import { api, internal } from "../../convex/_generated/api";
import type { Id } from "../../convex/_generated/dataModel";
import { armFault, disarmFaults } from "../../convex/core/faults";
import { ALLOW_PRIVATE_ENV } from "../../convex/webhooks/webhookAddress";
import { TIMING } from "../../convex/core/limits";
import { BULK_STALLS_MAX } from "../../convex/watchdog";
import { checkConsistency } from "./sweep/consistency";
import { inboxOf, scheduled } from "./queueState";
import { enrollWorker, newFarm, refreshSummaries, type Backend, type Farm } from "./setup";
import { startReceiver } from "./webhookReceiver";

/**
 * Each single-writer loop recovers by itself: one run of it throws (a test-only fault, convex/core/faults.ts),
 * its latch stays armed, and the watchdog (convex/watchdog.ts, a cron every minute) re-arms it within the
 * latch's stale age plus one watchdog period, under a new generation.
 */

let warnings: string[] = [];

beforeEach(() => {
  vi.useFakeTimers();
  warnings = [];
  vi.spyOn(console, "warn").mockImplementation((...args: unknown[]) => void warnings.push(args.map(String).join(" ")));
  vi.spyOn(console, "error").mockImplementation(() => {}); // convex-test reports the injected fault
});
let receiver: Awaited<ReturnType<typeof startReceiver>> | undefined;

/** A webhook receiver on this machine, which the farm may call (as a self-hosted farm allowing private addresses). */
async function receiving() {
  vi.stubEnv(ALLOW_PRIVATE_ENV, "1");
  receiver = await startReceiver(204);
  return receiver;
}

afterEach(async () => {
  disarmFaults();
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
  vi.useRealTimers();
  await receiver?.close();
  receiver = undefined;
});

/** The cron: one watchdog run every period for `ms`, letting what it schedules run; the first time `until` holds. */
async function watchdogTicks(t: Backend, ms: number, until: () => Promise<boolean>): Promise<number | null> {
  const start = Date.now();
  while (Date.now() - start < ms) {
    vi.advanceTimersByTime(TIMING.watchdogEveryMs);
    await t.mutation(internal.watchdog.check, {});
    await t.finishAllScheduledFunctions(() => vi.advanceTimersByTime(0));
    if (await until()) return Date.now() - start;
  }
  return null;
}

const worst = (staleMs: number) => staleMs + TIMING.watchdogEveryMs;

async function dispatchRow(farm: Farm) {
  return (await farm.t.run(async (ctx) => await ctx.db.query("dispatchStates").withIndex("by_org", (q) => q.eq("orgId", farm.orgId)).unique()))!;
}

test("a dispatcher round that throws leaves it scheduled; the watchdog re-arms it and the org's next job is offered within 90 s", async () => {
  const farm = await newFarm();
  const w = await enrollWorker(farm, { maxConcurrentJobs: 2 });
  expect(await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: w.capabilities, max: 2 })).toEqual([]);
  armFault("dispatch");
  const first = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x" });
  await farm.t.finishAllScheduledFunctions(() => vi.advanceTimersByTime(0));
  expect(await scheduled(farm.t, "dispatch:run", "failed")).toHaveLength(1);
  const stuck = await dispatchRow(farm);
  expect(stuck).toMatchObject({ scheduled: true, armedAt: expect.any(Number) as unknown });
  // without the watchdog nothing moves: a later job's kick finds the dispatcher "scheduled"
  const next = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x" });
  await farm.t.finishAllScheduledFunctions(() => vi.advanceTimersByTime(0));
  expect(await inboxOf(farm.t, w.workerId)).toEqual([]);
  // younger than the stale age: left alone
  vi.advanceTimersByTime(TIMING.dispatchStaleMs - 1_000);
  expect(await farm.t.mutation(internal.watchdog.check, {})).toMatchObject({ dispatchers: 0 });
  const offered = async () => (await inboxOf(farm.t, w.workerId)).filter((r) => r.kind === "offer").length === 2;
  const took = await watchdogTicks(farm.t, worst(TIMING.dispatchStaleMs), offered);
  expect(took).not.toBeNull();
  expect(new Set((await inboxOf(farm.t, w.workerId)).map((r) => r.jobId))).toEqual(new Set([first, next]));
  expect((await dispatchRow(farm)).generation).toBeGreaterThan(stuck.generation);
  expect(warnings.some((m) => m.includes("dispatcher of org"))).toBe(true);
  expect(await checkConsistency(farm.t)).toEqual([]);
});

test("a run of the dispatcher's old generation writes nothing once the watchdog re-armed it", async () => {
  const farm = await newFarm();
  const w = await enrollWorker(farm);
  expect(await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: w.capabilities })).toEqual([]);
  armFault("dispatch");
  await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x" });
  await farm.t.finishAllScheduledFunctions(() => vi.advanceTimersByTime(0));
  const old = (await dispatchRow(farm)).generation;
  vi.advanceTimersByTime(TIMING.dispatchStaleMs + 1);
  expect(await farm.t.mutation(internal.watchdog.check, {})).toMatchObject({ dispatchers: 1 });
  const before = await dispatchRow(farm);
  expect(await farm.t.mutation(internal.dispatch.run, { orgId: farm.orgId, generation: old })).toEqual({ stale: true, offered: 0 });
  expect(await dispatchRow(farm)).toEqual(before);
  expect(await inboxOf(farm.t, w.workerId)).toEqual([]);
  await farm.t.finishAllScheduledFunctions(() => vi.advanceTimersByTime(0));
  expect((await inboxOf(farm.t, w.workerId)).map((r) => r.kind)).toEqual(["offer"]);
});

test("a busy dispatcher that reschedules itself says it is alive, so the watchdog does not take it for a dead one", async () => {
  const farm = await newFarm();
  const w = await enrollWorker(farm, { maxConcurrentJobs: 32 });
  expect(await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: w.capabilities, max: 32 })).toEqual([]);
  for (let i = 0; i < 33; i++) await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x" });
  const armed = (await dispatchRow(farm)).armedAt!;
  vi.advanceTimersByTime(TIMING.dispatchStaleMs - 1_000); // the first round comes late (a busy deployment)
  await farm.t.finishInProgressScheduledFunctions(); // a full batch of 32 offers: it reschedules itself
  const busy = await dispatchRow(farm);
  expect(busy).toMatchObject({ scheduled: true, armedAt: armed + TIMING.dispatchStaleMs - 1_000 });
  expect(await scheduled(farm.t, "dispatch:run", "pending")).toHaveLength(1);
  vi.advanceTimersByTime(TIMING.dispatchStaleMs - 1_000);
  expect(await farm.t.mutation(internal.watchdog.check, {})).toMatchObject({ dispatchers: 0 });
  await farm.t.finishAllScheduledFunctions(vi.runAllTimers); // leave no run behind for the next test
});

test("a summary refresh that throws leaves it 'scheduled'; the watchdog re-arms it and the overview catches up within 90 s", async () => {
  const farm = await newFarm();
  const w = await enrollWorker(farm);
  await refreshSummaries(farm.t);
  await farm.t.finishAllScheduledFunctions(vi.runAllTimers); // nothing else left scheduled
  armFault("summary");
  await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x" });
  vi.advanceTimersByTime(TIMING.summaryMinGapMs);
  await farm.t.finishAllScheduledFunctions(() => vi.advanceTimersByTime(0));
  expect(await scheduled(farm.t, "summary:refresh", "failed")).toHaveLength(1);
  await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x" });
  vi.advanceTimersByTime(TIMING.summaryMinGapMs);
  await farm.t.finishAllScheduledFunctions(() => vi.advanceTimersByTime(0));
  const pending = async () => (await farm.t.query(api.farm.overview, { apiKey: w.apiKey })).counts.pending;
  expect(await pending()).toBe(0); // stuck: the second change's kick saw a refresh "scheduled"
  const took = await watchdogTicks(farm.t, worst(TIMING.summaryStaleMs), async () => (await pending()) === 2);
  expect(took).not.toBeNull();
  expect(warnings.some((m) => m.includes("summary refresh of org"))).toBe(true);
  // the refresh of the failed generation, were it to run now, writes nothing
  const state = await farm.t.run(async (ctx) => await ctx.db.query("summaryStates").first());
  const summary = await farm.t.run(async (ctx) => await ctx.db.query("summaries").first());
  await farm.t.mutation(internal.summary.refresh, { orgId: farm.orgId, generation: (state!.generation ?? 0) - 1 });
  expect(await farm.t.run(async (ctx) => await ctx.db.query("summaries").first())).toEqual(summary);
});

test("a bulk step that throws leaves the operation unfinished; the watchdog re-arms it and it finishes within 2 min", async () => {
  const farm = await newFarm();
  const op = await enrollWorker(farm, { canManage: true });
  const jobs: Id<"jobs">[] = [];
  for (let i = 0; i < 3; i++) jobs.push(await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x", batchId: "b" }));
  armFault("bulk");
  const { bulkId } = await farm.t.mutation(api.consoleActions.bulk, { apiKey: op.apiKey, action: "cancel", filter: { batchId: "b" } });
  await farm.t.finishAllScheduledFunctions(() => vi.advanceTimersByTime(0));
  const status = () => farm.t.query(api.console.bulkStatus, { apiKey: op.apiKey, bulkId });
  expect(await status()).toMatchObject({ done: false, batches: 0 });
  const took = await watchdogTicks(farm.t, worst(TIMING.bulkStaleMs), async () => (await status())?.done === true);
  expect(took).not.toBeNull();
  expect(await status()).toMatchObject({ done: true, affected: 3 });
  expect(warnings.some((m) => m.includes(`bulk cancel ${bulkId}`))).toBe(true);
  // the failed generation's step, were it to run again, does nothing
  await farm.t.mutation(internal.consoleActions.bulkStep, { bulkId, generation: 0 });
  expect(await status()).toMatchObject({ done: true, affected: 3 });
  expect(await checkConsistency(farm.t)).toEqual([]);
});

test("a webhook run that dies mid-attempt leaves it 'sending'; the watchdog re-arms it and it is delivered within the stale age plus 1 min", async () => {
  const farm = await newFarm();
  const w = await enrollWorker(farm);
  const { url, received: posts } = await receiving();
  await farm.t.mutation(api.jobs.setWebhook, { clientKey: farm.clientKey, url });
  const jobId = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x" });
  const [c] = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: w.capabilities });
  armFault("webhook");
  await farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: c.leaseId, result: 1 });
  await farm.t.finishAllScheduledFunctions(() => vi.advanceTimersByTime(0));
  const row = async () => (await farm.t.run(async (ctx) => await ctx.db.query("webhookDeliveries").first()))!;
  expect(await row()).toMatchObject({ state: "sending", jobId });
  expect(posts).toEqual([]);
  const stale = 10_000 + TIMING.webhookStaleMs; // the receiver's timeout, then the stale age
  const took = await watchdogTicks(farm.t, worst(stale), async () => (await row()).state === "delivered");
  expect(took).not.toBeNull();
  expect(posts).toHaveLength(1);
  expect((await row()).generation).toBe(1);
  // the attempt that never came back is on record, then the one that was delivered
  expect((await row()).attempts).toMatchObject([{ error: "the delivery run stopped before the attempt ended" }, { status: 204 }]);
  // an answer from the run that died (old generation) is not recorded
  const before = await row();
  await farm.t.mutation(internal.webhooks.endAttempt, { deliveryId: before._id, generation: 0, at: Date.now(), ms: 1, status: 500, jobStatus: "succeeded" });
  expect(await row()).toEqual(before);
  expect(warnings.some((m) => m.includes("webhook delivery"))).toBe(true);
});

test("a webhook delivery whose scheduled run was lost (pending long past its time) is re-armed too", async () => {
  const farm = await newFarm();
  const w = await enrollWorker(farm);
  await farm.t.mutation(api.jobs.setWebhook, { clientKey: farm.clientKey, url: (await receiving()).url });
  await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x" });
  const [c] = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: w.capabilities });
  await farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: c.leaseId, result: 1 });
  // the delivery run is lost before it starts
  await farm.t.run(async (ctx) => {
    for (const s of await ctx.db.system.query("_scheduled_functions").collect()) {
      if (s.name === "webhookDelivery:deliver" && s.state.kind === "pending") await ctx.scheduler.cancel(s._id);
    }
  });
  const row = async () => (await farm.t.run(async (ctx) => await ctx.db.query("webhookDeliveries").first()))!;
  expect((await row()).state).toBe("pending");
  const took = await watchdogTicks(farm.t, worst(TIMING.webhookStaleMs), async () => (await row()).state === "delivered");
  expect(took).not.toBeNull();
});

test("once re-armed, a bulk step or a webhook run of the old generation does nothing; the new one does the work", async () => {
  const farm = await newFarm();
  const op = await enrollWorker(farm, { canManage: true });
  const w = await enrollWorker(farm);
  await farm.t.mutation(api.jobs.setWebhook, { clientKey: farm.clientKey, url: (await receiving()).url });
  await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x" });
  const [c] = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: w.capabilities });
  armFault("webhook");
  await farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: c.leaseId, result: 1 });
  await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x", batchId: "b" });
  armFault("bulk");
  const { bulkId } = await farm.t.mutation(api.consoleActions.bulk, { apiKey: op.apiKey, action: "cancel", filter: { batchId: "b" } });
  await farm.t.finishAllScheduledFunctions(() => vi.advanceTimersByTime(0));
  vi.advanceTimersByTime(10_000 + TIMING.webhookStaleMs + 1);
  expect(await farm.t.mutation(internal.watchdog.check, {})).toMatchObject({ bulkOps: 1, webhookDeliveries: 1 });
  const rows = () => farm.t.run(async (ctx) => ({ op: await ctx.db.get(bulkId), delivery: await ctx.db.query("webhookDeliveries").first() }));
  const rearmed = await rows();
  expect(rearmed.op).toMatchObject({ done: false, generation: 1 });
  expect(rearmed.delivery).toMatchObject({ state: "pending", generation: 1 });
  await farm.t.mutation(internal.consoleActions.bulkStep, { bulkId, generation: 0 });
  expect(await farm.t.mutation(internal.webhooks.beginAttempt, { deliveryId: rearmed.delivery!._id, generation: 0 })).toBeNull();
  expect(await rows()).toEqual(rearmed);
  await farm.t.finishAllScheduledFunctions(() => vi.advanceTimersByTime(0));
  expect(await rows()).toMatchObject({ op: { done: true, affected: 1 }, delivery: { state: "delivered" } });
});

test("a delivery that keeps dying is given up 24 h after its first attempt, like one that keeps failing", async () => {
  const farm = await newFarm();
  const w = await enrollWorker(farm);
  // never reached: every run dies first
  await farm.t.mutation(api.jobs.setWebhook, { clientKey: farm.clientKey, url: (await receiving()).url });
  await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x" });
  const [c] = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: w.capabilities });
  armFault("webhook", 1_000);
  await farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: c.leaseId, result: 1 });
  await farm.t.finishAllScheduledFunctions(() => vi.advanceTimersByTime(0));
  const row = async () => (await farm.t.run(async (ctx) => await ctx.db.query("webhookDeliveries").first()))!;
  vi.advanceTimersByTime(25 * 60 * 60_000);
  await farm.t.mutation(internal.watchdog.check, {});
  expect(await row()).toMatchObject({ state: "failed", attempts: [{ error: "the delivery run stopped before the attempt ended" }] });
  expect(await scheduled(farm.t, "webhookDelivery:deliver", "pending")).toEqual([]);
});

test("a bulk operation whose step fails every time is given up after a few re-arms, saying why", async () => {
  const farm = await newFarm();
  const op = await enrollWorker(farm, { canManage: true });
  await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x", batchId: "b" });
  armFault("bulk", 1_000);
  const { bulkId } = await farm.t.mutation(api.consoleActions.bulk, { apiKey: op.apiKey, action: "cancel", filter: { batchId: "b" } });
  await farm.t.finishAllScheduledFunctions(() => vi.advanceTimersByTime(0));
  const status = () => farm.t.query(api.console.bulkStatus, { apiKey: op.apiKey, bulkId });
  for (let i = 0; i < BULK_STALLS_MAX; i++) {
    vi.advanceTimersByTime(TIMING.bulkStaleMs + 1);
    expect(await farm.t.mutation(internal.watchdog.check, {})).toMatchObject({ bulkOps: 1 });
    await farm.t.finishAllScheduledFunctions(() => vi.advanceTimersByTime(0));
    expect(await status()).toMatchObject({ done: false });
  }
  vi.advanceTimersByTime(TIMING.bulkStaleMs + 1);
  await farm.t.mutation(internal.watchdog.check, {});
  expect(await status()).toMatchObject({ done: true, affected: 0, error: expect.stringContaining("failed 6 times in a row") as unknown });
  vi.advanceTimersByTime(TIMING.bulkStaleMs + 1);
  expect(await farm.t.mutation(internal.watchdog.check, {})).toMatchObject({ bulkOps: 0 });
});
