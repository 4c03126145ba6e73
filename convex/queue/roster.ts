import type { Doc, Id } from "../_generated/dataModel";
import type { QueryCtx } from "../_generated/server";
import { effectiveCapabilities } from "../access/entry";
import { LIMITS, TIMING } from "../core/limits";
import { canServe, meetsClass } from "../lanes/entry";
import { donorKey, TRUST } from "../trust/entry";

/**
 * The org's workers as the summary sees them: every one counted, online ones first, from the `presence`
 * index by last call (a revoked worker has no presence row). Worker rows, which carry up to 256 capabilities
 * each, are read only as far as needed: the first `workersListed` for the list, and on — online-first, within
 * a row and byte budget — until every lane is known to be servable by an online worker and every machine
 * class met by some worker. A lane still undecided when the budget runs out is reported as not known, never
 * as unservable: "no online worker can run this" is said only after every worker was looked at.
 */

export type Roster = {
  listed: Array<{ worker: Doc<"workers">; lastSeenAt: number; stoppedAt?: number }>;
  counts: { total: number; online: number };
  /** The online workers, most recently seen first. */
  online: Array<Id<"workers">>;
  /** Per lane: an online worker can run it (true), none can (false); absent: not known. */
  servable: Map<Id<"lanes">, boolean>;
  /** Per lane no online worker can run: its capabilities that no online worker offers (the type's first). */
  nobodyHandles: Map<Id<"lanes">, string[]>;
  /** Lanes with requirements that no worker's reported machine meets (known for certain). */
  unmet: Set<Id<"lanes">>;
  /**
   * Per lane: the online machines (and donors) that can run it, by capabilities and class, up to MACHINES_NOTED
   * each; a lane is absent when the roster stopped before telling (a replicated job's "needs more machines").
   */
  machines: Map<Id<"lanes">, LaneMachines>;
  /** Per lane told in `machines` (not `many`): the online workers that can run it (their slots are its capacity). */
  capable: Map<Id<"lanes">, Array<Id<"workers">>>;
  /** The most any worker read reports: memory, cores, one GPU's memory (what a job no machine meets is told); none reported: undefined. */
  largest: { memoryMB: number; cores: number; vramMB: number } | undefined;
};

/** A lane's online machines and donors (donorKey), or `many`: at least MACHINES_NOTED machines (not listed). */
export type LaneMachines = { machines: string[]; donors: string[]; many?: true };

/** Machines noted per lane: one more than a replicated job's instances may ever need. */
export const MACHINES_NOTED = TRUST.maxInstances + 1;

function rowBytes(w: Doc<"workers">): number {
  let bytes = 400;
  for (const c of w.allowedCapabilities) bytes += c.length + 8;
  for (const c of w.advertisedCapabilities) bytes += c.length + 8;
  return bytes;
}

export async function workerRoster(ctx: QueryCtx, orgId: Id<"orgs">, now: number, lanes: Doc<"lanes">[]): Promise<Roster> {
  const onlineSince = now - TIMING.onlineWindowMs;
  const seen: Doc<"presence">[] = [];
  let complete = true;
  for await (const row of ctx.db.query("presence").withIndex("by_org_seen", (q) => q.eq("orgId", orgId)).order("desc")) {
    if (seen.length >= LIMITS.rosterPresenceScan) {
      complete = false;
      break;
    }
    seen.push(row);
  }
  const servable = new Map<Id<"lanes">, boolean>();
  const unmet = new Set<Id<"lanes">>();
  let toServe = lanes.slice();
  let toMeet = lanes.filter((l) => l.requirements !== undefined);
  const machines = new Map(lanes.map((l) => [l._id, { machines: new Set<string>(), donors: new Set<string>(), workers: [] as Array<Id<"workers">> }]));
  let toCount = lanes.slice();
  let countedAll = false;
  const largest = { memoryMB: 0, cores: 0, vramMB: 0 };
  let reported = false;
  // every capability some online worker offers, to say what a lane nobody can run lacks
  const offered = new Set<string>();
  const listed: Roster["listed"] = [];
  let revoked = 0;
  let reads = 0;
  let bytes = 0;
  let i = 0;
  for (; i < seen.length; i++) {
    const wanted = listed.length < LIMITS.workersListed || toServe.length > 0 || toMeet.length > 0 || toCount.length > 0;
    if (!wanted) break;
    if (reads >= LIMITS.rosterWorkerReads || bytes >= LIMITS.rosterWorkerBytes) {
      complete = false;
      break;
    }
    const recent = seen[i].lastSeenAt >= onlineSince;
    // a worker that said it stopped is offline from then, though its last call is recent
    const online = recent && seen[i].stoppedAt === undefined;
    if (!recent) {
      // past the online ones: every lane no online worker could run is unservable
      for (const lane of toServe) servable.set(lane._id, false);
      toServe = [];
      if (toCount.length > 0) countedAll = true;
      toCount = [];
    }
    const worker = await ctx.db.get(seen[i].workerId);
    reads++;
    if (!worker || worker.revoked) {
      revoked++;
      continue;
    }
    bytes += rowBytes(worker);
    if (worker.facts) {
      reported = true;
      largest.memoryMB = Math.max(largest.memoryMB, worker.facts.memoryMB);
      largest.cores = Math.max(largest.cores, worker.facts.cores);
      for (const g of worker.facts.gpus) largest.vramMB = Math.max(largest.vramMB, g.vramMB);
    }
    if (listed.length < LIMITS.workersListed) {
      const { lastSeenAt, stoppedAt } = seen[i];
      listed.push({ worker, lastSeenAt, ...(stoppedAt === undefined ? {} : { stoppedAt }) });
    }
    if (online && toServe.length > 0) {
      const caps = effectiveCapabilities(worker.allowedCapabilities, worker.advertisedCapabilities);
      for (const lane of toServe) for (const c of lane.capabilities) if (caps.has(c)) offered.add(c);
      toServe = toServe.filter((lane) => {
        if (!lane.capabilities.every((c) => caps.has(c))) return true;
        servable.set(lane._id, true);
        return false;
      });
    }
    if (online && toCount.length > 0) {
      const caps = effectiveCapabilities(worker.allowedCapabilities, worker.advertisedCapabilities);
      toCount = toCount.filter((lane) => {
        if (!canServe(lane, caps, worker.facts)) return true;
        const noted = machines.get(lane._id)!;
        noted.machines.add(worker.machineId);
        noted.donors.add(donorKey(worker));
        noted.workers.push(worker._id);
        return noted.machines.size < MACHINES_NOTED;
      });
    }
    if (toMeet.length > 0) toMeet = toMeet.filter((lane) => !meetsClass(worker.facts, lane.requirements));
  }
  if (complete && i >= seen.length) {
    if (toCount.length > 0) countedAll = true;
    for (const lane of toServe) servable.set(lane._id, false);
    for (const lane of toMeet) unmet.add(lane._id);
  }
  const online = seen.filter((p) => p.lastSeenAt >= onlineSince && p.stoppedAt === undefined).map((p) => p.workerId);
  const nobodyHandles = new Map<Id<"lanes">, string[]>();
  for (const lane of lanes) {
    if (servable.get(lane._id) === false) nobodyHandles.set(lane._id, lane.capabilities.filter((c) => !offered.has(c)));
  }
  // a lane whose count stopped short of MACHINES_NOTED is told only when every online worker was looked at
  // (at MACHINES_NOTED only that: the summary row stays small)
  const told = new Map<Id<"lanes">, LaneMachines>();
  const capable = new Map<Id<"lanes">, Array<Id<"workers">>>();
  for (const lane of lanes) {
    const noted = machines.get(lane._id)!;
    if (noted.machines.size >= MACHINES_NOTED) told.set(lane._id, { machines: [], donors: [], many: true });
    else if (countedAll) {
      told.set(lane._id, { machines: [...noted.machines], donors: [...noted.donors] });
      capable.set(lane._id, noted.workers);
    }
  }
  return { listed, counts: { total: seen.length - revoked, online: online.length }, online, servable, nobodyHandles, unmet, machines: told, capable, largest: reported ? largest : undefined };
}

