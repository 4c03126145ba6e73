import type { Doc, Id } from "../_generated/dataModel";
import type { QueryCtx } from "../_generated/server";
import { keyRunningRow } from "../lanes/entry";
import { formatMB, laneAppsText, needsText } from "./laneLabel";
import { paceText, queueEstimate } from "./paceText";
import { APPS_CAPABILITY } from "../core/appLimits";
import { summaryOf, type Summary } from "./summary";

/**
 * Why a job waits, in one stable code and a sentence for the people who wait for it: read from what the farm
 * already keeps (the job row, its lane, the summary row the summariser wrote, its client key's running count),
 * never from a scan of the queue. null when nothing but its turn holds it (or it does not wait).
 */

export type WaitCode =
  | "waiting_for_parents"
  | "waiting_for_identical"
  | "scheduled"
  | "backoff"
  | "no_worker_for_type"
  | "no_machine_meets"
  | "needs_more_machines"
  | "key_at_limit"
  | "all_paused"
  | "all_busy";

export type WaitExplanation = { code: WaitCode; reason: string };

type SummaryLane = Summary["lanes"][number];

/** Parents read at most to name the first one not yet succeeded. */
const PARENTS_READ = 20;

/**
 * What one query reads once for several jobs (a page of the console's list): the org's summary row, how many
 * parent rows it may still read to name waiting jobs' first unmet parents (a page of 100 jobs reads at most 200),
 * and the lanes, client keys and their running rows already read (a page reads each once, not once per job).
 */
export type WaitContext = { summary: Summary | null | undefined; parentReads?: number; read?: Map<string, Promise<unknown>> };

/** A row read once per WaitContext: later jobs of the same lane or key take the first read's answer. */
async function readOnce<T>(farm: WaitContext, key: string, load: () => Promise<T>): Promise<T> {
  farm.read ??= new Map();
  let hit = farm.read.get(key) as Promise<T> | undefined;
  if (hit === undefined) {
    hit = load();
    farm.read.set(key, hit);
  }
  return await hit;
}

const laneOf = (ctx: QueryCtx, farm: WaitContext, id: Id<"lanes">) => readOnce(farm, id, () => ctx.db.get(id));

export async function explainWait(ctx: QueryCtx, job: Doc<"jobs">, farm: WaitContext = { summary: undefined }): Promise<WaitExplanation | null> {
  if (job.status === "waiting" && job.cacheWaitsOn !== undefined) {
    return { code: "waiting_for_identical", reason: `an identical job (${job.cacheWaitsOn}) is queued or running: it takes that job's result, or runs itself if that one fails` };
  }
  if (job.status === "waiting") return await parentsReason(ctx, job, farm);
  if (job.status !== "pending") return null;
  if (job.queue === "delayed") {
    const at = utcText(job.availableAt);
    return job.attempt > 0
      ? { code: "backoff", reason: `attempt ${job.attempt} of ${job.maxAttempts} failed; it is retried after a backoff, at ${at}` }
      : { code: "scheduled", reason: `scheduled to start at ${at}` };
  }
  if (job.queue !== "ready") return null;
  if (farm.summary === undefined) farm.summary = await summaryOf(ctx, job.orgId);
  const summary = farm.summary;
  const lane = await laneOf(ctx, farm, job.laneId);
  const row = summary && lane ? summary.lanes.find((l) => l.routingKey === lane.routingKey) : undefined;
  if (summary && row) {
    const reason = laneReason(row, summary, needsOfJob(job)) ?? replicaReason(job, row);
    if (reason) return reason;
  }
  const keyLimit = await keyLimitReason(ctx, job, farm);
  if (keyLimit) return { code: "key_at_limit", reason: keyLimit };
  return summary && row ? capacityReason(row, summary) : null;
}

/** Its client key runs as many jobs as its maxRunning allows: "client key 'ci' is at its limit of 20 running". */
async function keyLimitReason(ctx: QueryCtx, job: Doc<"jobs">, farm: WaitContext): Promise<string | null> {
  if (job.status !== "pending" || job.queue !== "ready" || !job.clientKeyId) return null;
  const keyId = job.clientKeyId;
  const key = await readOnce(farm, keyId, () => ctx.db.get(keyId));
  if (!key || key.maxRunning === undefined) return null;
  // the row counts each start at once and each end once folded: at the limit, the dispatcher holds the job back
  const running = (await readOnce(farm, `running:${keyId}`, () => keyRunningRow(ctx, keyId)))?.running ?? 0;
  return running >= key.maxRunning ? `client key '${key.name}' is at its limit of ${key.maxRunning} running` : null;
}

async function parentsReason(ctx: QueryCtx, job: Doc<"jobs">, farm: WaitContext): Promise<WaitExplanation> {
  const unmet = job.unmetParents ?? 1;
  let first: string | undefined;
  for (const id of (job.dependsOn?.jobs ?? []).slice(0, PARENTS_READ)) {
    if (farm.parentReads !== undefined && farm.parentReads-- <= 0) break;
    const parent = await ctx.db.get(id);
    if (parent && parent.status !== "succeeded") {
      first = `job ${id} (${parent.type}, ${parent.status})`;
      break;
    }
  }
  if (first === undefined && job.dependsOn?.batch !== undefined) first = `batch '${job.dependsOn.batch}'`;
  const what = unmet === 1 ? "1 parent" : `${unmet} parents`;
  return { code: "waiting_for_parents", reason: `waits for ${what} to succeed${first ? `; the first: ${first}` : ""}` };
}

/**
 * Why nothing online runs a lane's jobs (no worker for their type, no machine that meets their class), or null:
 * the words a job of the lane gives with `needs`, its own requirement ("needs 3906.3 GB of memory"), and without
 * them those the lane shows, naming its class ("its jobs need a machine with ≥ 4096 GB of memory, the lane's class"):
 * a job asks at most its lane's class, so the two figures never contradict each other.
 */
export function laneReason(lane: SummaryLane, summary: Summary, needs?: Needs): WaitExplanation | null {
  if (lane.servable === false) {
    const apps = laneAppsText(lane);
    // an apps lane names the apps its jobs run: "apps (app.mandelbrot v3)"
    const missing = (lane.nobodyHandles ?? []).map((c) => (c === APPS_CAPABILITY && apps !== null ? `${c} (${apps})` : c));
    return {
      code: "no_worker_for_type",
      reason: missing.length > 0
        ? `no online worker handles ${missing.join(", ")}: it waits until one does`
        : `no online worker offers all of ${lane.capabilities.join(", ")}: it waits until one does`,
    };
  }
  const unmeetable = summary.unmeetable?.some((u) => u.routingKey === lane.routingKey) === true;
  const online = lane.onlineMachines;
  if (unmeetable || (lane.requirements && online && !online.many && online.machines.length === 0)) {
    const reason = needs !== undefined || !lane.requirements ? unmetText(needs ?? {}, summary, unmeetable, "it") : classUnmetText(lane.requirements, summary, unmeetable);
    return { code: "no_machine_meets", reason };
  }
  return null;
}

/** A replicated job that needs a machine (or donor) it has not run on, and no such one online can run it. */
function replicaReason(job: Doc<"jobs">, lane: SummaryLane): WaitExplanation | null {
  const rules = job.validation;
  const online = lane.onlineMachines;
  if (!rules || !online || online.many) return null;
  const byDonor = rules.distinct === "donor";
  const used = new Set(byDonor ? (rules.donors ?? []) : rules.machines);
  const able = byDonor ? online.donors : online.machines;
  if (!able.every((m) => used.has(m))) return null;
  const kind = byDonor ? "donors" : "machines";
  const ran = able.length === 0 ? "" : ` (${able.length === 1 ? "it" : "each"} already ran an instance)`;
  return {
    code: "needs_more_machines",
    reason: `quorum ${rules.quorum} needs ${rules.quorum} different ${kind}; ${able.length} online can run it${ran}: it waits until another one comes online`,
  };
}

/** What a job needs of its machine: its requirements, with its app version's memory. */
type Needs = { memoryMB?: number; cores?: number; gpu?: { vendor?: string; vramMB?: number } };

function needsOfJob(job: Doc<"jobs">): Needs | undefined {
  const r = job.requirements;
  const memoryMB = Math.max(r?.minMemoryMB ?? 0, job.app?.memoryMB ?? 0);
  if (!r && memoryMB === 0) return undefined;
  return {
    ...(memoryMB > 0 ? { memoryMB } : {}),
    ...(r?.minCores !== undefined ? { cores: r.minCores } : {}),
    ...(r?.gpu ? { gpu: { ...(r.gpu.vendor ? { vendor: r.gpu.vendor } : {}), ...(r.gpu.minVramMB !== undefined ? { vramMB: r.gpu.minVramMB } : {}) } } : {}),
  };
}

/** What it needs that no machine has: "needs 64 GB of memory; the largest machine has 16 GB". */
function unmetText(need: Needs, summary: Summary, everyWorker: boolean, them: "it" | "them"): string {
  const largest = summary.largestMachine;
  const machine = everyWorker ? "the largest machine" : "the largest known machine";
  const parts: string[] = [];
  if (need.memoryMB !== undefined && (!largest || largest.memoryMB * (16 / 15) < need.memoryMB)) {
    parts.push(`needs ${formatMB(need.memoryMB)} of memory${largest ? `; ${machine} has ${formatMB(largest.memoryMB)}` : ""}`);
  }
  if (need.cores !== undefined && (!largest || largest.cores < need.cores)) {
    parts.push(`needs ${need.cores} cores${largest ? `; ${machine} has ${largest.cores}` : ""}`);
  }
  if (need.gpu) {
    const vram = need.gpu.vramMB;
    if (!largest || largest.vramMB === 0) parts.push(`needs a ${need.gpu.vendor ? `${need.gpu.vendor} ` : ""}GPU; no machine reports one`);
    else if (vram !== undefined && largest.vramMB * (8 / 7) < vram) parts.push(`needs a GPU with ${formatMB(vram)}; the largest has ${formatMB(largest.vramMB)}`);
  }
  const what = parts.length > 0 ? parts.join("; ") : "no machine meets its requirements together";
  return everyWorker ? `${what}: no machine of the farm can run ${them}` : `${what}: no online machine can run ${them} now`;
}

/**
 * A lane's words, naming its class (its jobs ask at most that): "its jobs need a machine with ≥ 4096 GB memory (the
 * lane's class); the largest machine has 16 GB memory: no machine of the farm can run them".
 */
function classUnmetText(lane: Needs, summary: Summary, everyWorker: boolean): string {
  const largest = summary.largestMachine;
  const has: string[] = [];
  if (largest && lane.memoryMB !== undefined) has.push(`${formatMB(largest.memoryMB)} memory`);
  if (largest && lane.cores !== undefined) has.push(`${largest.cores} cores`);
  if (largest && lane.gpu) has.push(largest.vramMB > 0 ? `a GPU with ${formatMB(largest.vramMB)}` : "no GPU");
  const machine = everyWorker ? "the largest machine" : "the largest known machine";
  const what = `its jobs need a machine with ${needsText(lane)} (the lane's class)${has.length > 0 ? `; ${machine} has ${has.join(", ")}` : ""}`;
  return everyWorker ? `${what}: no machine of the farm can run them` : `${what}: no online machine can run them now`;
}

/**
 * Somebody can run it but nobody is free: paused donors, or every slot that can run it busy (with the lane's queue
 * and pace). The slots counted are those of the online workers that can run the lane when the summary knows them
 * (fewer than 11 machines), else every online worker's; the pace is the farm's (the summary keeps no lane's own).
 */
function capacityReason(lane: SummaryLane, summary: Summary): WaitExplanation | null {
  const states = summary.workerStates;
  if (states && states.idle === 0 && states.busy === 0 && states.paused + states.suspended > 0) {
    return {
      code: "all_paused",
      reason: `every online worker is paused or its donor is using the machine (${states.paused} paused, ${states.suspended} suspended): it waits until one resumes`,
    };
  }
  const own = lane.capableSlots;
  const slots = own ?? summary.slotStates;
  if (!slots || slots.free > 0 || slots.busy === 0) return null;
  const whose = own ? `of the ${own.workers === 1 ? "online worker" : `${own.workers} online workers`} that can run it` : "of the online workers";
  const ahead = Math.max(0, lane.pending - 1);
  const hourAgo = summary.refreshedAt - 60 * 60_000;
  const finished = summary.throughput.filter((m) => m.minuteStart >= hourAgo).reduce((s, m) => s + m.finished, 0);
  const estimate = queueEstimate(lane.pending, finished);
  const pace = estimate ? `; at the farm's pace over the last hour (${paceText(finished)}), ${estimate}` : "";
  return {
    code: "all_busy",
    reason: `every slot ${whose} is busy (${slots.busy} running); ${ahead} other job${ahead === 1 ? "" : "s"} wait${ahead === 1 ? "s" : ""} in its lane${pace}`,
  };
}

/** 2026-11-29 05:30:00 UTC */
function utcText(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 19).replace("T", " ")} UTC`;
}
