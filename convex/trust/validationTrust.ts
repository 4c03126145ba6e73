import type { Doc, Id } from "../_generated/dataModel";
import type { MutationCtx, QueryCtx } from "../_generated/server";
import { utcDay } from "./credit";
import { TRUST } from "./validation";

/**
 * Adaptive trust (BOINC's adaptive replication, with its numbers): each worker has a streak of consecutive
 * valid results per job type. At TRUST.trustedStreak or more, an `adaptive` job it runs is accepted on its own
 * with probability 1 − 1/streak. An invalid result resets the streak and halves the worker's daily job quota;
 * each valid result doubles it back, up to full (then the worker row carries no quota at all, and its claims
 * read nothing more than before).
 */

export async function streakRow(ctx: QueryCtx, workerId: Id<"workers">, type: string): Promise<Doc<"trustStreaks"> | null> {
  return await ctx.db
    .query("trustStreaks")
    .withIndex("by_worker_type", (q) => q.eq("workerId", workerId).eq("type", type))
    .unique();
}

/** Accept this worker's result alone? Only a trusted streak, and then with probability 1 − 1/streak. */
export function acceptAlone(streak: number, random: number = Math.random()): boolean {
  return streak >= TRUST.trustedStreak && random < 1 - 1 / streak;
}

/** Record one checked result of this worker for this job type: valid extends its streak, invalid resets it. */
export async function noteChecked(ctx: MutationCtx, worker: Doc<"workers"> | null, type: string, valid: boolean): Promise<void> {
  if (!worker) return;
  const row = await streakRow(ctx, worker._id, type);
  const now = Date.now();
  if (row) {
    await ctx.db.patch(row._id, valid ? { streak: row.streak + 1, valid: row.valid + 1 } : { streak: 0, invalid: row.invalid + 1, lastInvalidAt: now });
  } else {
    await ctx.db.insert("trustStreaks", {
      orgId: worker.orgId,
      workerId: worker._id,
      type,
      streak: valid ? 1 : 0,
      valid: valid ? 1 : 0,
      invalid: valid ? 0 : 1,
      ...(valid ? {} : { lastInvalidAt: now }),
    });
  }
  if (!valid) await ctx.db.patch(worker._id, { dailyQuota: Math.max(1, Math.floor((worker.dailyQuota ?? TRUST.dailyJobQuota) / 2)) });
  else if (worker.dailyQuota !== undefined) {
    const restored = worker.dailyQuota * 2;
    await ctx.db.patch(worker._id, { dailyQuota: restored >= TRUST.dailyJobQuota ? undefined : restored });
  }
}

async function useRow(ctx: QueryCtx, workerId: Id<"workers">, day: number) {
  return await ctx.db
    .query("quotaUse")
    .withIndex("by_worker_day", (q) => q.eq("workerId", workerId).eq("day", day))
    .unique();
}

/** How many more jobs this worker may claim today: unlimited (no read) at full trust. */
export async function quotaLeft(ctx: QueryCtx, worker: Doc<"workers">, now: number): Promise<number> {
  if (worker.dailyQuota === undefined) return Infinity;
  const used = (await useRow(ctx, worker._id, utcDay(now)))?.claimed ?? 0;
  return Math.max(0, worker.dailyQuota - used);
}

/** Count claims against a reduced quota (nothing to count at full trust). */
export async function noteClaimed(ctx: MutationCtx, worker: Doc<"workers">, count: number, now: number): Promise<void> {
  if (worker.dailyQuota === undefined || count === 0) return;
  const day = utcDay(now);
  const row = await useRow(ctx, worker._id, day);
  if (row) await ctx.db.patch(row._id, { claimed: row.claimed + count });
  else await ctx.db.insert("quotaUse", { orgId: worker.orgId, workerId: worker._id, day, claimed: count });
}

/** Streaks workers:myCredit lists (by type; `moreStreaks` when the worker has others). */
const DONOR_STREAKS = 50;

/** What the donor sees of its trust: its streaks per job type (the first 50 by type) and its quota. */
export async function trustOf(ctx: QueryCtx, worker: Doc<"workers">) {
  const rows = await ctx.db
    .query("trustStreaks")
    .withIndex("by_worker_type", (q) => q.eq("workerId", worker._id))
    .take(DONOR_STREAKS + 1);
  return {
    dailyQuota: worker.dailyQuota ?? TRUST.dailyJobQuota,
    fullQuota: TRUST.dailyJobQuota,
    streaks: rows.slice(0, DONOR_STREAKS).map((r) => ({ type: r.type, streak: r.streak, valid: r.valid, invalid: r.invalid, trusted: r.streak >= TRUST.trustedStreak })),
    moreStreaks: rows.length > DONOR_STREAKS,
  };
}

/** Streaks a console:workers row carries, lowest first (the ones that matter: where the worker is least trusted). */
const CONSOLE_STREAKS = 10;

/**
 * A worker's trust for a console:workers row: its lowest streaks (lowest first, read so by index however many
 * job types it has; `moreStreaks` when it has others) and its daily job quota. `lastDay`: its latest day of
 * counted claims (counted only while the quota is reduced), which the console compares with its own UTC day, so
 * the query reads no clock.
 */
export async function consoleTrustOf(ctx: QueryCtx, worker: Doc<"workers">) {
  const rows = await ctx.db
    .query("trustStreaks")
    .withIndex("by_worker_streak", (q) => q.eq("workerId", worker._id))
    .take(CONSOLE_STREAKS + 1);
  const streaks = rows
    .map((r) => ({ type: r.type, streak: r.streak, invalid: r.invalid, trusted: r.streak >= TRUST.trustedStreak }))
    .sort((a, b) => a.streak - b.streak || (a.type < b.type ? -1 : 1));
  const limit = worker.dailyQuota ?? TRUST.dailyJobQuota;
  const last =
    worker.dailyQuota === undefined
      ? null
      : await ctx.db
          .query("quotaUse")
          .withIndex("by_worker_day", (q) => q.eq("workerId", worker._id))
          .order("desc")
          .first();
  return {
    streaks: streaks.slice(0, CONSOLE_STREAKS),
    moreStreaks: rows.length > CONSOLE_STREAKS,
    quota: {
      limit,
      full: TRUST.dailyJobQuota,
      // how many halvings an invalid result left it at (net of the valid results that doubled it back)
      halvings: Math.round(Math.log2(TRUST.dailyJobQuota / limit)),
      lastDay: last ? { day: last.day, claimed: last.claimed } : null,
    },
  };
}
