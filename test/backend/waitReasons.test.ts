// Why a job waits (convex/queue/waitReasons.ts): one code and sentence per cause, the same from jobs:get, the console's
// job page and its list, read from the summary row, the lane and the job, and the queue consistent after each.
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { api, internal } from "../../convex/_generated/api";
import type { Id } from "../../convex/_generated/dataModel";
import { addKey, setLimits } from "./fairFarm";
import { runDue } from "./queueState";
import { enrollWorker, LAPTOP_FACTS, newFarm, refreshSummaries, TEST_TYPES, type Farm } from "./setup";
import { checkConsistency } from "./sweep/consistency";
import { donor, instanceLease, submitReplicated } from "./validationDonors";

const NOON = Date.UTC(2026, 10, 18, 12);

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(NOON);
});
afterEach(() => {
  vi.useRealTimers();
});

type Why = { waitCode: string | null; waitReason: string | null };

/** The job's code and sentence from every surface that shows it, after the summariser ran; they must agree. */
async function whyOf(farm: Farm, jobId: Id<"jobs">, clientKey = farm.clientKey): Promise<Why> {
  await refreshSummaries(farm.t);
  const ops = (await farm.t.mutation(internal.admin.createOperatorKey, { orgId: farm.orgId, name: `ops-${Math.random()}` })).key;
  const got = (await farm.t.query(api.jobs.get, { clientKey, jobId }))!;
  const page = (await farm.t.query(api.console.job, { apiKey: ops, jobId }))!;
  const list = await farm.t.query(api.console.jobs, { apiKey: ops, filter: {}, paginationOpts: { numItems: 100, cursor: null } });
  const row = list.page.find((j) => j.jobId === jobId)!;
  const why = { waitCode: got.waitCode, waitReason: got.waitReason };
  const http = (await (await farm.t.fetch(`/api/jobs/${jobId}`, { headers: { Authorization: `Bearer ${clientKey}` } })).json()) as Why;
  expect({ waitCode: http.waitCode, waitReason: http.waitReason }).toEqual(why);
  expect({ waitCode: page.waitCode, waitReason: page.waitReason }).toEqual(why);
  expect({ waitCode: row.waitCode, waitReason: row.waitReason }).toEqual(why);
  expect(await checkConsistency(farm.t)).toEqual([]);
  return why;
}

const submit = (farm: Farm, spec: Record<string, unknown> = {}) => farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x", ...spec });

describe("why a job waits", () => {
  test("no_worker_for_type: no online worker handles its type", async () => {
    const farm = await newFarm();
    await enrollWorker(farm, { facts: LAPTOP_FACTS });
    const jobId = await submit(farm, { type: "image.resize" });
    await submit(farm, { type: "image.resize" });
    await submit(farm, { type: "x" });
    const why = { waitCode: "no_worker_for_type", waitReason: "no online worker handles image.resize: it waits until one does" };
    expect(await whyOf(farm, jobId)).toEqual(why);
    // the console's Overview lists the lane as stuck, with its count and the type to filter the Jobs page by
    const ops = (await farm.t.mutation(internal.admin.createOperatorKey, { orgId: farm.orgId, name: "stuck" })).key;
    const { stuck } = await farm.t.query(api.console.overview, { apiKey: ops });
    expect(stuck).toEqual([{ routingKey: "image.resize", capabilities: ["image.resize"], requirements: null, pending: 2, type: "image.resize", ...why }]);
  });

  test("no_machine_meets: more memory than any machine has, naming the largest", async () => {
    const farm = await newFarm();
    const w = await enrollWorker(farm, { facts: LAPTOP_FACTS });
    const jobId = await submit(farm, { type: "demo.echo", requirements: { minMemoryMB: 65_536 } });
    const why = { waitCode: "no_machine_meets", waitReason: "needs 64 GB of memory; the largest machine has 16 GB: no machine of the farm can run it" };
    expect(await whyOf(farm, jobId)).toEqual(why);
    // a job asking less than its lane's class names its own figure; the Farm view's lane and the console's Stuck
    // section name the class, which its jobs ask at most (its machines list stays on the server)
    const less = await submit(farm, { type: "demo.echo", requirements: { minMemoryMB: 60_000 } });
    expect(await whyOf(farm, less)).toEqual({ ...why, waitReason: "needs 58.6 GB of memory; the largest machine has 16 GB: no machine of the farm can run it" });
    const laneWhy = {
      waitCode: "no_machine_meets",
      waitReason: "its jobs need a machine with ≥ 64 GB memory (the lane's class); the largest machine has 16 GB memory: no machine of the farm can run them",
    };
    const { lanes } = await farm.t.query(api.farm.overview, { apiKey: w.apiKey });
    const lane = lanes.find((l) => l.routingKey === "demo.echo|mem>=65536")!;
    expect(lane).toMatchObject(laneWhy);
    expect("onlineMachines" in lane).toBe(false);
    const ops = (await farm.t.mutation(internal.admin.createOperatorKey, { orgId: farm.orgId, name: "class" })).key;
    const { stuck } = await farm.t.query(api.console.overview, { apiKey: ops });
    expect(stuck?.find((l) => l.routingKey === "demo.echo|mem>=65536")).toMatchObject({ pending: 2, ...laneWhy });
    // a job the same machine meets does not say so; one needing a GPU is told none reports one
    const gpu = await submit(farm, { type: "demo.echo", requirements: { gpu: { vendor: "nvidia" } } });
    expect((await whyOf(farm, gpu)).waitReason).toBe("needs a nvidia GPU; no machine reports one: no machine of the farm can run it");
    const fits = await submit(farm, { type: "demo.echo", requirements: { minMemoryMB: 8_192 } });
    expect((await whyOf(farm, fits)).waitCode).not.toBe("no_machine_meets");
  });

  test("no_machine_meets with no machine that reported its facts names only the need", async () => {
    const farm = await newFarm();
    await enrollWorker(farm);
    const jobId = await submit(farm, { type: "demo.echo", requirements: { minMemoryMB: 2_048 } });
    expect(await whyOf(farm, jobId)).toEqual({ waitCode: "no_machine_meets", waitReason: "needs 2 GB of memory: no machine of the farm can run it" });
  });

  test("needs_more_machines: quorum 2 with one machine, after its instance returned", async () => {
    const farm = await newFarm();
    const only = await donor(farm, "only");
    const jobId = await submitReplicated(farm, { quorum: 2 });
    const lease = await instanceLease(farm, only, jobId);
    await farm.t.mutation(api.workers.complete, { apiKey: only.apiKey, leaseId: lease, result: { n: 1 } });
    await runDue(farm.t);
    expect(await whyOf(farm, jobId)).toEqual({
      waitCode: "needs_more_machines",
      waitReason: "quorum 2 needs 2 different machines; 1 online can run it (it already ran an instance): it waits until another one comes online",
    });
    // a second machine online: it no longer says so
    await donor(farm, "second");
    expect((await whyOf(farm, jobId)).waitCode).not.toBe("needs_more_machines");
  });

  test("needs_more_machines by donor: two machines of one donor do not make a distinct-donor quorum", async () => {
    const farm = await newFarm();
    const { token } = await farm.t.mutation(internal.admin.createEnrollment, { orgId: farm.orgId, capabilities: TEST_TYPES, maxConcurrentJobs: 4, donor: "ann" });
    const { token: token2 } = await farm.t.mutation(internal.admin.createEnrollment, { orgId: farm.orgId, capabilities: TEST_TYPES, maxConcurrentJobs: 4, donor: "ann" });
    const first = await farm.t.mutation(api.workers.enroll, { token, name: "ann-1", machineId: "m1", capabilities: TEST_TYPES, facts: LAPTOP_FACTS });
    await farm.t.mutation(api.workers.enroll, { token: token2, name: "ann-2", machineId: "m2", capabilities: TEST_TYPES, facts: LAPTOP_FACTS });
    const jobId = await submitReplicated(farm, { quorum: 2, distinct: "donor" });
    const lease = await instanceLease(farm, { ...first, name: "ann-1" }, jobId);
    await farm.t.mutation(api.workers.complete, { apiKey: first.apiKey, leaseId: lease, result: { n: 1 } });
    await runDue(farm.t);
    expect(await whyOf(farm, jobId)).toMatchObject({ waitCode: "needs_more_machines", waitReason: expect.stringContaining("quorum 2 needs 2 different donors; 1 online can run it") as unknown });
  });

  test("waiting_for_parents: how many, naming the first not yet succeeded", async () => {
    const farm = await newFarm();
    const a = await submit(farm);
    const b = await submit(farm);
    const child = await submit(farm, { dependsOn: { jobs: [a, b] } });
    expect(await whyOf(farm, child)).toEqual({ waitCode: "waiting_for_parents", waitReason: `waits for 2 parents to succeed; the first: job ${a} (x, pending)` });
  });

  test("waiting_for_identical: a cached job waits on the identical one in flight, naming it", async () => {
    const farm = await newFarm();
    await farm.t.run(async (ctx) => ctx.db.patch(farm.orgId, { cacheUnvalidated: true }));
    const first = await submit(farm, { payload: { n: 1 }, cache: true });
    const second = await submit(farm, { payload: { n: 1 }, cache: true });
    expect(await whyOf(farm, second)).toEqual({
      waitCode: "waiting_for_identical",
      waitReason: `an identical job (${first}) is queued or running: it takes that job's result, or runs itself if that one fails`,
    });
  });

  test("scheduled: when it starts", async () => {
    const farm = await newFarm();
    await enrollWorker(farm, { facts: LAPTOP_FACTS });
    const jobId = await submit(farm, { runAt: NOON + 30 * 60_000 });
    expect(await whyOf(farm, jobId)).toEqual({ waitCode: "scheduled", waitReason: "scheduled to start at 2026-11-18 12:30:00 UTC" });
  });

  test("backoff: a failed attempt waits until its retry", async () => {
    const farm = await newFarm();
    const w = await enrollWorker(farm, { facts: LAPTOP_FACTS });
    const jobId = await submit(farm, { maxAttempts: 3 });
    const [lease] = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: TEST_TYPES });
    await farm.t.mutation(api.workers.fail, { apiKey: w.apiKey, leaseId: lease.leaseId, error: "boom" });
    const at = (await farm.t.run(async (ctx) => await ctx.db.get(jobId)))!.availableAt;
    expect(await whyOf(farm, jobId)).toEqual({
      waitCode: "backoff",
      waitReason: `attempt 1 of 3 failed; it is retried after a backoff, at ${new Date(at).toISOString().slice(0, 19).replace("T", " ")} UTC`,
    });
  });

  test("key_at_limit: its client key runs its maxRunning", async () => {
    const farm = await newFarm();
    const ci = await addKey(farm, "batch");
    await setLimits(farm, ci, { maxRunning: 1 });
    const w = await enrollWorker(farm, { facts: LAPTOP_FACTS, maxConcurrentJobs: 4 });
    const first = await farm.t.mutation(api.jobs.submit, { clientKey: ci.key, type: "x" });
    const second = await farm.t.mutation(api.jobs.submit, { clientKey: ci.key, type: "x" });
    await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: TEST_TYPES, max: 1 });
    expect(await whyOf(farm, second, ci.key)).toEqual({ waitCode: "key_at_limit", waitReason: "client key 'batch' is at its limit of 1 running" });
    expect((await whyOf(farm, first, ci.key)).waitCode).toBeNull();
  });

  test("all_paused: every online worker declared no slots", async () => {
    const farm = await newFarm();
    const w = await enrollWorker(farm, { facts: LAPTOP_FACTS });
    await farm.t.mutation(api.workers.ready, { apiKey: w.apiKey, capabilities: w.capabilities, slots: 0 });
    const jobId = await submit(farm);
    expect(await whyOf(farm, jobId)).toEqual({
      waitCode: "all_paused",
      waitReason: "every online worker is paused or its donor is using the machine (1 paused, 0 suspended): it waits until one resumes",
    });
  });

  test("all_busy: every slot runs a job, with how many wait ahead in its lane", async () => {
    const farm = await newFarm();
    const w = await enrollWorker(farm, { facts: LAPTOP_FACTS, maxConcurrentJobs: 1 });
    await submit(farm);
    const [lease] = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: TEST_TYPES, max: 1 });
    expect(lease).toBeDefined();
    await submit(farm);
    const last = await submit(farm);
    expect(await whyOf(farm, last)).toEqual({ waitCode: "all_busy", waitReason: "every slot of the online worker that can run it is busy (1 running); 1 other job waits in its lane" });
  });

  test("all_busy counts the slots of the workers that can run its lane, not the farm's, and says the farm's pace", async () => {
    const farm = await newFarm();
    const w = await enrollWorker(farm, { facts: LAPTOP_FACTS, maxConcurrentJobs: 1, types: ["x"] });
    // another worker with free slots that cannot run type x
    await enrollWorker(farm, { facts: LAPTOP_FACTS, maxConcurrentJobs: 4, types: ["demo.echo"], name: "echo" });
    await submit(farm);
    const [done] = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: w.capabilities, max: 1 });
    await farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: done.leaseId, result: { n: 1 } });
    await submit(farm);
    const [lease] = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: w.capabilities, max: 1 });
    expect(lease).toBeDefined();
    await submit(farm);
    const last = await submit(farm);
    // 2 jobs queued at 1 an hour: about 2 h
    expect(await whyOf(farm, last)).toEqual({
      waitCode: "all_busy",
      waitReason: "every slot of the online worker that can run it is busy (1 running); 1 other job waits in its lane; at the farm's pace over the last hour (1 an hour), about 2 h",
    });
  });

  test("nothing but its turn: a free slot that can run it leaves no reason", async () => {
    const farm = await newFarm();
    const w = await enrollWorker(farm, { facts: LAPTOP_FACTS, maxConcurrentJobs: 2 });
    await submit(farm);
    await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: TEST_TYPES, max: 1 });
    const jobId = await submit(farm);
    expect(await whyOf(farm, jobId)).toEqual({ waitCode: null, waitReason: null });
  });
});
