import { join } from "node:path";
import { convexTest } from "convex-test";
import { vi } from "vitest";
import { api } from "../../convex/_generated/api";
import { TIMING } from "../../convex/core/limits";
import type { Doc } from "../../convex/_generated/dataModel";
import { enrollWorker, newFarm, withoutSystemFields, type Enrolled } from "../../test/backend/setup";
import { api as seedApi } from "../seedStyle/convex/_generated/api";
import seedSchema from "../seedStyle/convex/schema";
import { CLIENTS } from "./mix";
import { modulesFromDirectory } from "../../test/server/modules";
import { recordReads } from "./readRecorder";

/** One claim measured against the round's starting state (then rolled back). */
export type DryClaim = { picked: string | null; documentsRead: number; jobDocs: Set<string> };

export type Design = {
  name: string;
  /** Fill the queue: capability sets in arrival order. */
  fill(queue: string[][]): Promise<void>;
  dryClaim(client: number): Promise<DryClaim>;
  /** Every client claims for real, one after another, and finishes what it got; returns jobs claimed. */
  commitRound(): Promise<number>;
};

type RunCtx = {
  meta: { getTransactionMetrics(): Promise<{ documentsRead: { used: number } }> };
  runMutation(ref: unknown, args: unknown): Promise<unknown>;
};
type Runner = { run<T>(fn: (ctx: RunCtx) => Promise<T>): Promise<T> };

const ROLLBACK = "compare-bench: roll back the dry run";

/** Run one mutation inside t.run, count what it read, and throw so nothing it wrote is kept. */
async function dryRun(t: Runner, ref: unknown, args: unknown, pickedOf: (result: unknown) => string | null): Promise<DryClaim> {
  let measured: DryClaim | undefined;
  try {
    await t.run(async (ctx) => {
      const before = (await ctx.meta.getTransactionMetrics()).documentsRead.used;
      const { result, docs } = await recordReads(() => ctx.runMutation(ref, args));
      const after = (await ctx.meta.getTransactionMetrics()).documentsRead.used;
      const jobDocs = new Set([...docs].filter(([, d]) => "requiredCapabilities" in d && "status" in d).map(([id]) => id));
      measured = { picked: pickedOf(result), documentsRead: after - before, jobDocs };
      throw new Error(ROLLBACK);
    });
  } catch (error) {
    if (!(error instanceof Error) || !error.message.includes(ROLLBACK)) throw error;
  }
  return measured!;
}

/**
 * Farmhand as its workers use it: each client waits (slots 1), the org's dispatcher offers the ready heads
 * to the waiting clients, and a client's claim takes its own offer. Fake timers, so the dispatcher runs when
 * the bench says (between rounds), never in the middle of one.
 */
export async function farmhandDesign(): Promise<Design> {
  vi.useFakeTimers();
  const farm = await newFarm();
  const workers: Enrolled[] = [];
  for (const client of CLIENTS) {
    workers.push(await enrollWorker(farm, { capabilities: client.capabilities, types: ["job"], maxConcurrentJobs: 32, name: client.name }));
  }
  const t = farm.t as unknown as Runner;
  /** Run the dispatcher's rounds until it goes idle. */
  const dispatch = async () => {
    for (let round = 0; round < 50; round++) {
      vi.advanceTimersByTime(TIMING.dispatchBatchDelayMs);
      await farm.t.finishInProgressScheduledFunctions();
      const state = await farm.t.run(async (ctx) => await ctx.db.query("dispatchStates").first());
      if (!state?.scheduled) return;
    }
  };
  return {
    name: "farmhand",
    // The first job of each capability set is a real jobs:submit (it makes the lane and its counters);
    // the rest are copies written in bulk in queue order, as test/backend/seed.ts does for one lane.
    async fill(queue) {
      const templates = new Map<string, Doc<"jobs">>();
      const copies: Array<{ at: number; template: string }> = [];
      for (const [i, requiredCapabilities] of queue.entries()) {
        const key = requiredCapabilities.join(",");
        if (!templates.has(key)) {
          const jobId = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "job", requiredCapabilities });
          templates.set(key, (await farm.t.run(async (ctx) => await ctx.db.get(jobId)))!);
        } else {
          copies.push({ at: i, template: key });
        }
      }
      const start = Date.now();
      for (let from = 0; from < copies.length; from += 4_000) {
        await farm.t.run(async (ctx) => {
          const added = new Map<string, number>();
          for (const { at, template } of copies.slice(from, from + 4_000)) {
            const job = withoutSystemFields(templates.get(template)!);
            await ctx.db.insert("jobs", { ...job, availableAt: start + at });
            added.set(template, (added.get(template) ?? 0) + 1);
          }
          for (const [key, n] of added) {
            const laneId = templates.get(key)!.laneId;
            const shard = await ctx.db
              .query("laneShards")
              .withIndex("by_lane_shard", (q) => q.eq("laneId", laneId).eq("shard", 0))
              .unique();
            await ctx.db.patch(shard!._id, { pending: shard!.pending + n });
          }
        });
      }
      // every client waits for one job; the dispatcher hands out the first round's offers
      for (const w of workers) await farm.t.mutation(api.workers.ready, { apiKey: w.apiKey, capabilities: w.capabilities, slots: 1 });
      await dispatch();
    },
    async dryClaim(client) {
      const w = workers[client];
      return await dryRun(t, api.workers.claim, { apiKey: w.apiKey, capabilities: w.capabilities, max: 1 }, (result) => {
        const claims = result as Array<{ jobId: string }>;
        return claims[0]?.jobId ?? null;
      });
    },
    async commitRound() {
      let claimed = 0;
      for (const w of workers) {
        const claims = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: w.capabilities, max: 1 });
        // the last write declares its slot again, so the next round's offers come without another call
        for (const c of claims) await farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: c.leaseId, result: null, slots: 1 });
        claimed += claims.length;
      }
      await dispatch();
      return claimed;
    },
  };
}

export function seedStyleDesign(): Design {
  const modules = modulesFromDirectory(join(__dirname, "..", "seedStyle", "convex"));
  const t = convexTest({ schema: seedSchema, modules, transactionLimits: true });
  return {
    name: "seed-style",
    async fill(queue) {
      for (let start = 0; start < queue.length; start += 4_000) {
        await t.run(async (ctx) => {
          for (const [i, requiredCapabilities] of queue.slice(start, start + 4_000).entries()) {
            await ctx.db.insert("jobs", { type: `job-${start + i}`, requiredCapabilities, status: "pending" });
          }
        });
      }
      await t.run(async (ctx) => {
        await ctx.db.insert("flags", { hasWork: true });
      });
    },
    async dryClaim(client) {
      const c = CLIENTS[client];
      return await dryRun(t, seedApi.queue.claim, { workerName: c.name, capabilities: c.capabilities }, (r) =>
        typeof r === "string" ? r : null,
      );
    },
    async commitRound() {
      let claimed = 0;
      for (const c of CLIENTS) {
        const jobId = await t.mutation(seedApi.queue.claim, { workerName: c.name, capabilities: c.capabilities });
        if (jobId) {
          await t.mutation(seedApi.queue.complete, { jobId });
          claimed++;
        }
      }
      return claimed;
    },
  };
}
