import { afterEach, expect, test, vi } from "vitest";
import { api } from "../../../convex/_generated/api";
import type { Id } from "../../../convex/_generated/dataModel";
import { newBackend, overviewNow, refreshSummaries, runningJobs, type Backend } from "../setup";
import { checkConsistency } from "./consistency";
import { fullSnapshot } from "./judge";
import { outcomeOf, type Outcome } from "./outcome";
import { buildOrgWorld, type OrgWorld } from "./world";

afterEach(() => {
  vi.useRealTimers();
});

/** Every row that belongs to one org, and every timer that will touch one of its jobs. */
async function orgRows(t: Backend, orgId: Id<"orgs">) {
  const all = await fullSnapshot(t);
  const mine = (row: unknown) => (row as { orgId?: string; _id: string }).orgId === orgId || (row as { _id: string })._id === orgId;
  const jobIds = new Set(all.jobs.filter(mine).map((j) => (j as { _id: string })._id));
  const rows: Record<string, unknown[]> = {};
  for (const [table, list] of Object.entries(all)) {
    rows[table] =
      table === "_scheduled_functions"
        ? list.filter((s) => jobIds.has(((s as { args: Array<{ jobId?: string }> }).args[0] ?? {}).jobId ?? ""))
        : list.filter(mine);
  }
  return rows;
}

type Attempt = { what: string; outcome: Outcome; ok: (o: Outcome) => boolean };

const refusedWith = (code: string) => (o: Outcome) => o.kind === "refused" && o.code === code;
const answeredNull = (o: Outcome) => o.kind === "answered" && o.value === null;

test("a worker, a manager and a client key of org B try every read and write on org A's objects: all refused, A unchanged", async () => {
  vi.useFakeTimers();
  const t = newBackend();
  const a: OrgWorld = await buildOrgWorld(t, "a");
  const b: OrgWorld = await buildOrgWorld(t, "b");
  const aJobs = Object.values(a.jobs) as string[];
  const aJobSet = new Set(aJobs);
  const aLeases = [a.liveLease, a.managerLease, ...Object.values(a.staleLeases)];
  const aOtherIds = Object.values(a.otherIds);
  await refreshSummaries(t); // the summaries as overview shows them (rewritten below with the same content)
  const before = await orgRows(t, a.farm.orgId);
  const attempts: Attempt[] = [];
  const attempt = async (what: string, call: () => Promise<unknown>, ok: (o: Outcome) => boolean) => {
    attempts.push({ what, outcome: await outcomeOf(call), ok });
  };
  const client = b.farm.clientKey;

  // the submitter API, by job id, external id and batch id
  for (const jobId of [...aJobs, ...aOtherIds]) {
    await attempt(`jobs:get ${jobId}`, () => t.query(api.jobs.get, { clientKey: client, jobId }), answeredNull);
    await attempt(`jobs:cancel ${jobId}`, () => t.mutation(api.jobs.cancel, { clientKey: client, jobId }), refusedWith("not_found"));
    for (const fn of ["retryJob", "cancelJob", "purgeJob"] as const) {
      for (const key of [b.manager.apiKey, b.worker.apiKey]) {
        const expected = key === b.manager.apiKey ? "not_found" : "forbidden";
        await attempt(`consoleActions:${fn} ${jobId}`, () => t.mutation(api.consoleActions[fn], { apiKey: key, jobId }), refusedWith(expected));
      }
    }
    for (const [method, path] of [["GET", `/api/jobs/${jobId}`], ["POST", `/api/jobs/${jobId}/cancel`]]) {
      await attempt(
        `HTTP ${method} ${path}`,
        async () => {
          const res = await t.fetch(path, { method, headers: { authorization: `Bearer ${client}` } });
          return { status: res.status, body: await res.json() };
        },
        (o) => o.kind === "answered" && (o.value as { status: number }).status === 404,
      );
    }
  }
  await attempt("jobs:byExternalId", () => t.query(api.jobs.byExternalId, { clientKey: client, externalId: a.externalId }), answeredNull);
  await attempt(
    "jobs:batchStatus",
    () => t.query(api.jobs.batchStatus, { clientKey: client, batchId: a.batchId }),
    (o) => o.kind === "answered" && (o.value as { total: number }).total === 0,
  );

  // org A's leases in org B's workers' hands
  for (const leaseId of aLeases) {
    for (const apiKey of [b.worker.apiKey, b.manager.apiKey]) {
      const stale = refusedWith("stale_lease");
      await attempt("heartbeat", () => t.mutation(api.workers.heartbeat, { apiKey, leaseId, progress: 1 }), stale);
      await attempt("output", () => t.mutation(api.workers.output, { apiKey, leaseId, chunk: "b was here" }), stale);
      await attempt("complete", () => t.mutation(api.workers.complete, { apiKey, leaseId, result: "stolen" }), stale);
      await attempt("fail", () => t.mutation(api.workers.fail, { apiKey, leaseId, error: "x", retryable: false }), stale);
      await attempt("release", () => t.mutation(api.workers.release, { apiKey, leaseId }), stale);
    }
  }

  // claims drain org B's queue and never reach org A's ready jobs; then watch sees nothing to do
  const claimed: string[] = [];
  for (let round = 0; round < 4; round++) {
    for (const worker of [b.worker, b.manager]) {
      const got = await t.mutation(api.workers.claim, { apiKey: worker.apiKey, capabilities: ["a.job", "b.job", "cpu", "gpu"], max: 8 });
      claimed.push(...got.map((c) => c.jobId));
    }
  }
  expect(claimed.filter((id) => aJobSet.has(id))).toEqual([]);

  // what org B's reads show: only org B
  const mine = await runningJobs(t, b.worker.apiKey);
  expect(mine.filter((j) => aJobSet.has(j.jobId))).toEqual([]);
  const overview = await overviewNow(t, b.manager.apiKey);
  const aWorkerIds = new Set([a.worker.workerId, a.manager.workerId, a.revokedWorker.workerId] as string[]);
  expect(overview.workers.filter((w) => aWorkerIds.has(w.workerId))).toEqual([]);
  const overviewA = await overviewNow(t, a.manager.apiKey);
  expect(overview.counts.pending + overview.counts.running).toBe(
    (await t.run(async (ctx) => await ctx.db.query("jobs").collect())).filter(
      (j) => j.orgId === b.farm.orgId && (j.status === "pending" || j.status === "running"),
    ).length,
  );
  expect(overviewA.counts.pending).toBeGreaterThan(0);
  const dead = await t.query(api.farm.deadLetters, { apiKey: b.worker.apiKey });
  expect(dead.filter((d) => aJobSet.has(d.jobId))).toEqual([]);

  // re-using org A's external id and batch id from org B makes org B's own jobs
  const ownJob = await t.mutation(api.jobs.submit, { clientKey: client, type: "b.job", externalId: a.externalId, batchId: a.batchId });
  expect(aJobSet.has(ownJob)).toBe(false);
  const post = (type: string) =>
    t.fetch("/api/jobs", {
      method: "POST",
      headers: { authorization: `Bearer ${client}`, "content-type": "application/json" },
      body: JSON.stringify({ type, externalId: a.externalId, batchId: a.batchId }),
    });
  const replay = await post("b.job");
  expect(replay.headers.get("Idempotent-Replayed")).toBe("true");
  expect(((await replay.json()) as { jobId: string }).jobId).toBe(ownJob);
  // the same external id with another spec is refused, never answered with org A's job or org B's
  const other = await post("b.http");
  expect(other.status).toBe(409);
  expect(((await other.json()) as { error: { code: string } }).error.code).toBe("idempotency_mismatch");
  expect((await t.query(api.jobs.batchStatus, { clientKey: client, batchId: a.batchId })).total).toBe(1);

  // the operator's console of org B, on org A's jobs, workers, keys and tokens
  const op = b.manager.apiKey;
  for (const jobId of [...aJobs, ...aOtherIds]) {
    await attempt(`console:job ${jobId}`, () => t.query(api.console.job, { apiKey: op, jobId }), answeredNull);
    await attempt(`console:jobOutput ${jobId}`, () => t.query(api.console.jobOutput, { apiKey: op, jobId }), refusedWith("not_found"));
    await attempt(`console:bulkStatus ${jobId}`, () => t.query(api.console.bulkStatus, { apiKey: op, bulkId: jobId }), answeredNull);
    for (const fn of ["retryJob", "cancelJob", "purgeJob"] as const) {
      await attempt(`consoleActions:${fn} ${jobId}`, () => t.mutation(api.consoleActions[fn], { apiKey: op, jobId }), refusedWith("not_found"));
    }
    await attempt(`revokeWorker ${jobId}`, () => t.mutation(api.consoleAccess.revokeWorker, { apiKey: op, workerId: jobId }), refusedWith("not_found"));
    await attempt(`revokeClientKey ${jobId}`, () => t.mutation(api.consoleAccess.revokeClientKey, { apiKey: op, clientKeyId: jobId }), refusedWith("not_found"));
    await attempt(`revokeEnrollment ${jobId}`, () => t.mutation(api.consoleAccess.revokeEnrollment, { apiKey: op, enrollmentId: jobId }), refusedWith("not_found"));
  }
  for (const workerId of [a.worker.workerId, a.manager.workerId]) {
    await attempt(`revokeWorker ${workerId}`, () => t.mutation(api.consoleAccess.revokeWorker, { apiKey: op, workerId }), refusedWith("not_found"));
  }
  await attempt("revokeEnrollment of A", () => t.mutation(api.consoleAccess.revokeEnrollment, { apiKey: op, enrollmentId: a.otherIds.expiredEnrollmentId }), refusedWith("not_found"));
  const noneOfA = (o: Outcome) => o.kind === "answered" && (o.value as { page: Array<{ jobId: string }> }).page.every((j) => !aJobSet.has(j.jobId));
  for (const filter of [{}, { externalId: a.externalId }, { batchId: a.batchId }, { status: "dead" as const }, { type: "a.job" }]) {
    await attempt(`console:jobs ${JSON.stringify(filter)}`, () => t.query(api.console.jobs, { apiKey: op, filter, paginationOpts: { numItems: 100, cursor: null } }), noneOfA);
  }
  const aWorkers = new Set([a.worker.workerId, a.manager.workerId, a.revokedWorker.workerId] as string[]);
  await attempt("console:workers", () => t.query(api.console.workers, { apiKey: op }), (o) => o.kind === "answered" && (o.value as { page: Array<{ workerId: string }> }).page.every((w) => !aWorkers.has(w.workerId)));
  await attempt("consoleAccess:list", () => t.query(api.consoleAccess.list, { apiKey: op }), (o) => o.kind === "answered" && !JSON.stringify(o.value).includes(a.otherIds.clientKeyId));
  for (const action of ["retry", "cancel"] as const) {
    await attempt(`bulk ${action}`, () => t.mutation(api.consoleActions.bulk, { apiKey: op, action, filter: { batchId: a.batchId } }), (o) => o.kind === "answered");
  }
  await attempt("purgeDead", () => t.mutation(api.consoleActions.purgeDead, { apiKey: op }), (o) => o.kind === "answered");
  // run the bulk batches (due now) without letting org A's own timers (leases, promotions) come due
  for (let round = 0; round < 5; round++) {
    vi.advanceTimersByTime(0);
    await t.finishInProgressScheduledFunctions();
  }
  const bulks = await t.run(async (ctx) => await ctx.db.query("bulkOps").collect());
  // retry finds no dead letter in the batch; cancel takes org B's own job of that batch id; purge B's dead letter
  expect(bulks.map((op) => [op.action, op.done, op.affected])).toEqual([["retry", true, 0], ["cancel", true, 1], ["purge", true, 1]]);
  expect(await t.query(api.jobs.get, { clientKey: client, jobId: ownJob })).toMatchObject({ status: "canceled" });

  const refusedWrongly = attempts.filter((x) => !x.ok(x.outcome)).map((x) => `${x.what}: ${JSON.stringify(x.outcome).slice(0, 200)}`);
  expect(refusedWrongly).toEqual([]);
  expect(attempts.length).toBeGreaterThan(150); // 13 ids × 12 calls + 5 leases × 10 calls + 2 lookups
  expect(await orgRows(t, a.farm.orgId)).toEqual(before);
  expect(await checkConsistency(t)).toEqual([]);
});
