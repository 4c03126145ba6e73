import { afterEach, beforeEach, expect, test, vi } from "vitest";
import { api, internal } from "../../../convex/_generated/api";
import type { Id } from "../../../convex/_generated/dataModel";
import { LIMITS } from "../../../convex/core/limits";
import { scheduled } from "../queueState";
import { enrollWorker, type Farm } from "../setup";
import { checkConsistency } from "../sweep/consistency";
import { atStep, CAPS_TARGETS, recordPeaks, stopRecording } from "./peaks";
import { BIG_TYPE, capsFarm, claimAll, drain, fullBody, fullError, manager, submitBig } from "./world";

// Jobs written before bodies moved beside them carry payload, result and a long error on the row. Readers
// fall back to those fields until migrations:moveJobBodies has moved them, in batches under the byte targets.

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  stopRecording();
  vi.useRealTimers();
});

/** Put a job back in the old shape: its bodies on the row, none beside it. */
async function toOldShape(farm: Farm, jobId: Id<"jobs">, error?: string) {
  await farm.t.run(async (ctx) => {
    const job = (await ctx.db.get(jobId))!;
    const bodies = await ctx.db
      .query("jobBodies")
      .withIndex("by_job_part", (q) => q.eq("jobId", jobId))
      .collect();
    const part = (name: string) => bodies.find((b) => b.part === name)?.value as unknown;
    await ctx.db.replace(jobId, {
      ...job,
      payloadBytes: undefined,
      resultBytes: undefined,
      payload: part("payload"),
      ...(job.status === "succeeded" ? { result: part("result") } : {}),
      ...(error !== undefined ? { error } : {}),
    });
    for (const body of bodies) await ctx.db.delete(body._id);
  });
}

/** What every reader says about these jobs. */
async function readersSee(farm: Farm, opKey: string, ids: Array<Id<"jobs">>) {
  const views = [];
  for (const jobId of ids) {
    const view = await farm.t.query(api.jobs.get, { clientKey: farm.clientKey, jobId });
    const page = await farm.t.query(api.console.job, { apiKey: opKey, jobId });
    views.push({ status: view!.status, result: view!.result, error: view!.error, payload: page!.payload, pageError: page!.error });
  }
  const dead = await farm.t.query(api.farm.deadLetters, { apiKey: opKey });
  return { views, dead: dead.map((d) => d.error) };
}

test("old-shape jobs read whole before the migration, and are moved beside their rows by it in byte-bounded batches", async () => {
  const farm = await capsFarm();
  const op = await manager(farm);
  const w = await enrollWorker(farm, { name: "w", types: [BIG_TYPE], maxConcurrentJobs: LIMITS.maxConcurrentJobs });
  const succeeded = await submitBig(farm, 4);
  const dead = await submitBig(farm, 4, { maxAttempts: 1 });
  for (const job of await claimAll(farm, w, 8)) {
    if (succeeded.includes(job.jobId)) await farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: job.leaseId, result: fullBody(`r-${job.jobId}`) });
    else await farm.t.mutation(api.workers.fail, { apiKey: w.apiKey, leaseId: job.leaseId, error: fullError(job.jobId), retryable: false });
  }
  const pending = await submitBig(farm, 4);
  const ids = [...succeeded, ...dead, ...pending];
  const before = await readersSee(farm, op.apiKey, ids);
  expect(before.views.filter((v) => v.status === "succeeded").map((v) => v.result)).toEqual(succeeded.map((id) => fullBody(`r-${id}`)));
  expect(before.dead).toHaveLength(4);
  expect(before.dead.every((e) => e!.length === LIMITS.errorChars)).toBe(true);

  for (const id of ids) await toOldShape(farm, id, dead.includes(id) ? fullError(id) : undefined);
  const oldRows = await farm.t.run(async (ctx) => ({
    rows: await Promise.all(ids.map((id) => ctx.db.get(id))),
    bodies: (await ctx.db.query("jobBodies").take(1)).length,
  }));
  expect(oldRows.bodies).toBe(0);
  expect(oldRows.rows.every((r) => r!.payload !== undefined && r!.payloadBytes === undefined)).toBe(true);

  atStep("readers of old-shape rows");
  const peaks = recordPeaks();
  expect(await readersSee(farm, op.apiKey, ids)).toEqual(before);
  // a pending old-shape job is claimed with its payload
  const reclaimer = await enrollWorker(farm, { name: "reclaimer", types: [BIG_TYPE], maxConcurrentJobs: 1 });
  const [taken] = await farm.t.mutation(api.workers.claim, { apiKey: reclaimer.apiKey, capabilities: reclaimer.capabilities, max: 1 });
  expect(taken.payload).toBe(fullBody(`payload-${pending.indexOf(taken.jobId)}`));
  await farm.t.mutation(api.workers.release, { apiKey: reclaimer.apiKey, leaseId: taken.leaseId, slots: 0 });

  atStep("migrations:moveJobBodies");
  const first = await farm.t.mutation(internal.migrations.moveJobBodies, {});
  expect(first.done).toBe(false); // 12 rows of up to 512 KiB do not fit one batch's byte budget
  await drain(farm, "migrations");
  expect((await scheduled(farm.t, "migrations", "success")).length).toBeGreaterThanOrEqual(2);
  expect(peaks.bytesRead.bytes).toBeLessThanOrEqual(CAPS_TARGETS.bytesRead);
  expect(peaks.bytesWritten.bytes).toBeLessThanOrEqual(CAPS_TARGETS.bytesWritten);

  atStep("seed");
  const moved = await farm.t.run(async (ctx) => await Promise.all(ids.map((id) => ctx.db.get(id))));
  for (const row of moved) {
    expect(row!.payload).toBeUndefined();
    expect(row!.result).toBeUndefined();
    expect(row!.payloadBytes).toBeGreaterThan(LIMITS.payloadBytes - 100);
    expect(row!.error === undefined || row!.error.length <= LIMITS.summaryErrorChars).toBe(true);
  }
  expect(await readersSee(farm, op.apiKey, ids)).toEqual(before);
  expect(await checkConsistency(farm.t)).toEqual([]);
  // running it again finds nothing to move
  expect(await farm.t.mutation(internal.migrations.moveJobBodies, {})).toMatchObject({ moved: 0 });
});
