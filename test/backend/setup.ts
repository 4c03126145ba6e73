import { join } from "node:path";
import { convexTest } from "convex-test";
import type { FunctionReturnType } from "convex/server";
import { expect } from "vitest";
import { api, internal } from "../../convex/_generated/api";
import type { Id } from "../../convex/_generated/dataModel";
import { workerFromKey } from "../../convex/access/auth";
import type { MachineFacts } from "../../convex/lanes/facts";
import schema from "../../convex/schema";
import { modulesFromDirectory } from "../server/modules";

/** The project's Convex functions, as convex-test loads them. */
export const modules = modulesFromDirectory(join(__dirname, "..", "..", "convex"));

export function newBackend() {
  return convexTest({ schema, modules, transactionLimits: true });
}

export type Backend = ReturnType<typeof newBackend>;

export type Farm = {
  t: Backend;
  orgId: Id<"orgs">;
  clientKey: string;
};

/** A fresh backend with one org and one client key. */
export async function newFarm(t: Backend = newBackend(), name = "acme"): Promise<Farm> {
  const orgId = await t.mutation(internal.admin.createOrg, { name });
  const { key } = await t.mutation(internal.admin.createClientKey, { orgId, name: "ci" });
  return { t, orgId, clientKey: key };
}

/** An ordinary donor machine: enough memory for any app version (apps may ask for up to 2 GB). */
export const LAPTOP_FACTS: MachineFacts = { cores: 8, memoryMB: 16_384, os: "linux", arch: "x64", gpus: [] };

/**
 * The job types the backend tests submit, which every test worker handles unless a test says otherwise
 * (`types: []`): a job's type routes it (convex/lanes/routing.ts), and these tests are about something else.
 * No name here is used as a required capability by a test.
 */
export const TEST_TYPES: string[] = [
  ...["x", "a.job", "b.job", "b.http", "b0", "b1", "b2", "credit.job", "demo.echo", "demo.primes", "encode", "existing"],
  ...["f", "fast", "first", "g", "host", "host.job", "k", "later", "long", "n", "new", "now", "ok", "other", "p", "render"],
  ...["second", "seed", "slow", "story", "sweep.job", "t", "theirs", "train", "waits"],
  ...Array.from({ length: 50 }, (_, i) => `j${i}`),
  ...Array.from({ length: 6 }, (_, i) => `p${i + 1}`),
].sort();

export type Enrolled = FunctionReturnType<typeof api.workers.enroll> & { capabilities: string[] };

export async function enrollWorker(
  farm: Farm,
  options: {
    capabilities?: string[];
    allowed?: string[];
    /** Job types it handles, on top of `capabilities` (allowed and advertised); default TEST_TYPES. */
    types?: string[];
    maxConcurrentJobs?: number;
    canManage?: boolean;
    name?: string;
    facts?: MachineFacts;
  } = {},
): Promise<Enrolled> {
  const types = options.types ?? TEST_TYPES;
  const capabilities = [...new Set([...(options.capabilities ?? []), ...types])].sort();
  const { token } = await farm.t.mutation(internal.admin.createEnrollment, {
    orgId: farm.orgId,
    capabilities: options.allowed ? [...new Set([...options.allowed, ...types])].sort() : capabilities,
    maxConcurrentJobs: options.maxConcurrentJobs ?? 4,
    canManage: options.canManage,
  });
  const enrolled = await farm.t.mutation(api.workers.enroll, {
    token,
    name: options.name ?? "laptop",
    machineId: "machine-1",
    capabilities,
    ...(options.facts ? { facts: options.facts } : {}),
  });
  return { ...enrolled, capabilities };
}

/** Assert that a promise rejects with a ConvexError carrying this code. */
export async function expectCode(promise: Promise<unknown>, code: string) {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error, `expected a ConvexError with code "${code}"`).not.toBeNull();
  const data = (error as { data?: unknown }).data;
  const parsed = typeof data === "string" ? (JSON.parse(data) as unknown) : data;
  expect(parsed).toMatchObject({ code });
  expect(typeof (parsed as { message: unknown }).message).toBe("string");
}

/** Every row of the tables that make up the queue's state, for "nothing changed" assertions. */
export async function snapshot(t: Backend) {
  return await t.run(async (ctx) => ({
    jobs: await ctx.db.query("jobs").collect(),
    laneShards: await ctx.db.query("laneShards").collect(),
    counterDeltas: await ctx.db.query("counterDeltas").collect(),
    orgShards: await ctx.db.query("orgShards").collect(),
    jobOutput: await ctx.db.query("jobOutput").collect(),
    jobEvents: await ctx.db.query("jobEvents").collect(),
    workers: await ctx.db.query("workers").collect(),
    enrollments: await ctx.db.query("enrollments").collect(),
    presence: await ctx.db.query("presence").collect(),
    waiters: await ctx.db.query("waiters").collect(),
    laneWaiters: await ctx.db.query("laneWaiters").collect(),
    inbox: await ctx.db.query("inbox").collect(),
    dispatchStates: await ctx.db.query("dispatchStates").collect(),
    summaryStates: await ctx.db.query("summaryStates").collect(),
    summaries: await ctx.db.query("summaries").collect(),
  }));
}

/** Run the summariser of every org now: farm:overview shows the summary it last wrote. */
export async function refreshSummaries(t: Backend) {
  const orgs = await t.run(async (ctx) => await ctx.db.query("orgs").collect());
  for (const org of orgs) await t.mutation(internal.summary.refresh, { orgId: org._id, all: true });
}

/** farm:overview as it reads right after the summariser ran. */
export async function overviewNow(t: Backend, apiKey: string) {
  await refreshSummaries(t);
  return await t.query(api.farm.overview, { apiKey });
}

/** What the HTTP routes answer, as far as the tests read it: each field is there or not. */
export type HttpAnswer = {
  jobId?: string;
  jobIds?: string[];
  status?: string;
  name?: string;
  version?: number;
  error?: { code: string; message: string };
} & Record<string, unknown>;

export async function answerOf(res: Response): Promise<HttpAnswer> {
  return (await res.json()) as HttpAnswer;
}

/** vitest types its asymmetric matchers as any; as unknown they fit in typed expectations. */
export const anyNumber: unknown = expect.any(Number);

/** A document's own fields, without the ones the database assigns: for inserting copies of it. */
export function withoutSystemFields<Doc extends { _id: unknown; _creationTime: unknown }>(doc: Doc): Omit<Doc, "_id" | "_creationTime"> {
  const fields: Partial<Doc> = { ...doc };
  delete fields._id;
  delete fields._creationTime;
  return fields as Omit<Doc, "_id" | "_creationTime">;
}

/** The worker's running jobs as the farm holds them (what a test asks of a worker's leases; no public query lists them). */
export async function runningJobs(t: Backend, apiKey: string) {
  return await t.run(async (ctx) => {
    const worker = await workerFromKey(ctx, apiKey);
    const jobs = await ctx.db
      .query("jobs")
      .withIndex("by_worker_status", (q) => q.eq("workerId", worker._id).eq("status", "running"))
      .collect();
    return jobs.map((job) => ({
      jobId: job._id,
      leaseId: job.leaseId!,
      type: job.type,
      ...(job.app ? { app: { name: job.app.name, version: job.app.version } } : {}),
      attempt: job.attempt,
      progress: job.progress,
      statusText: job.statusText,
      cancelRequested: job.cancelRequested === true,
      startedAt: job.startedAt,
      leaseExpiresAt: job.leaseExpiresAt,
      suspendedSince: job.suspendedSince,
    }));
  });
}
