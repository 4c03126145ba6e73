import type { Doc, Id } from "../_generated/dataModel";
import type { MutationCtx } from "../_generated/server";
import { ByteBudget, TX_BUDGET } from "../core/budget";
import { FAIR } from "./fairLimits";
import { firstReady, flowAfter, levelFlows, type FlowKey } from "./fairQueue";
import { effectivePass, nextPass, pickFlow, type FlowHead } from "./fairShare";
import { addKeyRunning, exactRunning, keyRunningRow } from "../lanes/entry";

/**
 * One round of handing out ready jobs in fair-share order (queue/fairShare.ts), for the dispatcher and for a claim
 * that takes lane heads itself: it reads each lane's flows at its best priority level and offers the best head
 * (`next`); the caller hands it out (`took`), passes over it (`skip`) or gives up on its lane (`dropLane`). A client
 * key at its maxRunning is held back for the round. `save` writes what moved: passes, virtual times, the limited
 * keys' running counts. Reads O(lanes + flows + jobs handed out); passes and virtual times only where more than
 * one key (or fairness key) has jobs at a level — with one, the order is FIFO and nothing needs to move.
 */

/** A client key as the round uses it; no clientKeyId stands for jobs submitted without one (never limited). */
type KeyState = {
  clientKeyId?: Id<"clientKeys">;
  weight: number;
  maxRunning?: number;
  overrides: number;
  /** running jobs and instances as counted (at most), plus those handed out in this round; limited keys only */
  running: number;
  started: number;
  /** the unfolded ends were counted in (exactRunning) */
  exact: boolean;
  blocked: boolean;
};

type PassFields = Omit<Doc<"fairPasses">, "_id" | "_creationTime" | "pass" | "at">;
type ClockFields = Omit<Doc<"fairClocks">, "_id" | "_creationTime" | "vtime">;
/** A pass or a lane's virtual time as read (no row yet: 0), and whether the round moved it. */
type Pass = { row: Doc<"fairPasses"> | null; fields: PassFields; pass: number; dirty: boolean };
type Clock = { row: Doc<"fairClocks"> | null; fields: ClockFields; vtime: number; dirty: boolean };

type LaneState = {
  lane: Doc<"lanes">;
  /** its current priority level (negPriority), null when it has nothing ready left */
  level: number | null;
  flows: Flow[];
  open: boolean;
  /** its level's flows were more than it may read: it ends with them this round (never a lower level before them) */
  cutLevel: boolean;
  /** a job of it was handed out this round */
  served: boolean;
  /** dropped (nobody to take its jobs) before it served one: the flows it read were not looked at, so the next round reads them again */
  unseen: boolean;
  budget: ByteBudget;
  maxFlows: number;
};

export type Flow = {
  lane: LaneState;
  key: KeyState;
  fairnessKey?: string;
  head: Doc<"jobs"> | null;
  /** jobs of it this round took or passed over (they may still be in a range read before) */
  passed: Set<Id<"jobs">>;
  rest?: AsyncGenerator<Doc<"jobs">>;
};

const keyId = (clientKeyId: Id<"clientKeys"> | undefined): string => clientKeyId ?? "";
const flowId = (fairnessKey: string | undefined): string => (fairnessKey === undefined ? "-" : `+${fairnessKey}`);
const passId = (level: number, scope: "key" | "flow", clientKeyId: Id<"clientKeys"> | undefined, fairnessKey: string | undefined) =>
  scope === "key" ? `${level}|k|${keyId(clientKeyId)}` : `${level}|f|${keyId(clientKeyId)}|${flowId(fairnessKey)}`;
const clockId = (laneId: Id<"lanes">, level: number, scope: "keys" | "flows", clientKeyId: Id<"clientKeys"> | undefined) =>
  `${laneId}|${level}|${scope}|${scope === "flows" ? keyId(clientKeyId) : ""}`;
/** Rows of one kind a round reads in one range (the client keys' passes at a level, a lane's clocks at a level). */
const ROWS_AT_ONCE = 1000;
type RowsAtOnce<T> = { rows: Map<string, T>; complete: boolean };
/** Cursor rows a round reads: at most one per lane and level that was cut. */
const CURSORS_READ = 1000;

export class FairRound {
  private readonly lanes: LaneState[] = [];
  private readonly keys = new Map<string, KeyState>();
  private readonly passes = new Map<string, Pass>();
  private readonly clocks = new Map<string, Clock>();
  private readonly flowWeights = new Map<string, number>();
  private readonly passLoads = new Map<string, Promise<Pass>>();
  private readonly clockLoads = new Map<string, Promise<Clock>>();
  private readonly keyPassReads = new Map<number, Promise<RowsAtOnce<Doc<"fairPasses">>>>();
  private readonly clockReads = new Map<string, Promise<RowsAtOnce<Doc<"fairClocks">>>>();
  /** the client keys seen per level, and the fairness keys seen per level and client key: who competes */
  private readonly keysAt = new Map<number, Set<string>>();
  private readonly flowsAt = new Map<string, Set<string>>();
  private readonly cursors = new Map<string, Doc<"fairCursors">>();
  private cursorsRead = false;
  /** where the lanes' levels that were cut stop now (null: they were read to the end) */
  private readonly cursorMoves = new Map<string, { lane: LaneState; level: number; after: FlowKey | null }>();
  /** a lane's flows were more than a round reads: another round goes on after them */
  cut = false;
  /** some key was held back at its maxRunning */
  limited = false;

  private constructor(
    private readonly ctx: MutationCtx,
    private readonly orgId: Id<"orgs">,
    private readonly now: number,
  ) {}

  /** The round over these lanes: each lane's first ready job and the flows of its level are read now. */
  static async open(ctx: MutationCtx, orgId: Id<"orgs">, lanes: Doc<"lanes">[], now: number): Promise<FairRound> {
    const round = new FairRound(ctx, orgId, now);
    const firsts = await Promise.all(lanes.map((lane) => firstReady(ctx, lane._id)));
    const withWork = firsts.filter((f) => f !== null).length;
    // every lane with work gets its part of the round's reading, so one lane of many flows cannot starve the others
    const maxFlows = Math.max(2, Math.floor(FAIR.flowsPerRound / Math.max(1, withWork)));
    // half of it: a level that does not fit is read twice (from its first flow, then from where the last round stopped)
    const bytes = Math.max(32 * 1024, Math.floor(TX_BUDGET.rangeReadBytes / 2 / Math.max(1, withWork)));
    for (const [i, lane] of lanes.entries()) {
      const first = firsts[i];
      if (!first) continue;
      const state: LaneState = { lane, level: first.negPriority, flows: [], open: true, cutLevel: false, served: false, unseen: false, budget: new ByteBudget(bytes), maxFlows };
      round.lanes.push(state);
      await round.readLevel(state, first);
    }
    return round;
  }

  /** The best head to hand out now, or null when every lane is done, dropped or held back. */
  async next(): Promise<Flow | null> {
    for (;;) {
      for (const state of this.lanes) await this.settleLevel(state);
      const open = this.lanes.filter((s) => s.open && s.level !== null);
      if (open.length === 0) return null;
      const level = Math.min(...open.map((s) => s.level!));
      const flows = open.filter((s) => s.level === level).flatMap((s) => s.flows.filter((f) => f.head && !f.key.blocked));
      // their passes are read side by side the first time (then known)
      const heads = await Promise.all(flows.map((flow) => this.headOf(flow)));
      const best = pickFlow(heads)!.flow;
      if (await this.mayStart(best.key)) return best;
    }
  }

  /** The head was handed out (offered or leased): its key's and flow's passes move on, and the lane's clocks. */
  async took(flow: Flow): Promise<void> {
    const { lane, key } = flow;
    const level = lane.level!;
    const laneId = lane.lane._id;
    if (this.competing(level)) {
      const pass = await this.keyPass(level, key.clientKeyId);
      const clock = await this.clock(laneId, level, "keys");
      const effective = effectivePass(pass.pass, clock.vtime);
      this.move(pass, nextPass(effective, key.weight));
      this.advance(clock, effective);
    }
    if (this.competingFlows(level, key.clientKeyId)) {
      const pass = await this.flowPass(level, key.clientKeyId, flow.fairnessKey);
      const clock = await this.clock(laneId, level, "flows", key.clientKeyId);
      const effective = effectivePass(pass.pass, clock.vtime);
      this.move(pass, nextPass(effective, await this.flowWeight(key, flow.fairnessKey)));
      this.advance(clock, effective);
    }
    key.running++;
    // a job queued before the key's counters existed is not in them (its end will not count down either)
    if (flow.head!.keyCounted) key.started++;
    lane.served = true;
    await this.skip(flow);
  }

  /** Pass over the head (it stays ready): the flow's next job is looked at. */
  async skip(flow: Flow): Promise<void> {
    flow.passed.add(flow.head!._id);
    flow.rest ??= flowAfter(this.ctx, flow.head!);
    for (;;) {
      const next = await flow.rest.next();
      if (next.done) {
        flow.head = null;
        return;
      }
      if (!flow.passed.has(next.value._id)) {
        flow.head = next.value;
        return;
      }
    }
  }

  /** Nobody can take this lane's jobs this round. */
  dropLane(flow: Flow): void {
    flow.lane.open = false;
    if (!flow.lane.served) flow.lane.unseen = true;
  }

  /**
   * Write the passes and virtual times that moved, where the lanes' cut levels stop, and count the jobs handed out
   * against their limited keys.
   */
  async save(): Promise<void> {
    for (const pass of this.passes.values()) {
      if (!pass.dirty) continue;
      if (pass.row) await this.ctx.db.patch(pass.row._id, { pass: pass.pass, at: this.now });
      else await this.ctx.db.insert("fairPasses", { ...pass.fields, pass: pass.pass, at: this.now });
    }
    for (const clock of this.clocks.values()) {
      if (!clock.dirty) continue;
      if (clock.row) await this.ctx.db.patch(clock.row._id, { vtime: clock.vtime });
      else await this.ctx.db.insert("fairClocks", { ...clock.fields, vtime: clock.vtime });
    }
    for (const [id, { lane, level, after }] of this.cursorMoves) {
      if (lane.unseen) continue;
      const laneId = lane.lane._id;
      const row = this.cursors.get(id);
      if (after === null) {
        if (row) await this.ctx.db.delete(row._id);
      } else if (row) await this.ctx.db.patch(row._id, { after });
      else await this.ctx.db.insert("fairCursors", { orgId: this.orgId, laneId, negPriority: level, after });
    }
    for (const key of this.keys.values()) {
      if (key.clientKeyId && key.maxRunning !== undefined && key.started > 0) await addKeyRunning(this.ctx, this.orgId, key.clientKeyId, key.started);
    }
  }

  /**
   * Where the last round stopped reading this lane's level, if it was cut. `known`: only if the round already read
   * the org's cursors (a level read to its end clears a cursor it knows of; a stale one is cleared when next cut).
   */
  private async cursorOf(laneId: Id<"lanes">, level: number, known = false): Promise<Doc<"fairCursors"> | null> {
    if (!this.cursorsRead) {
      if (known) return null;
      const rows = await this.ctx.db
        .query("fairCursors")
        .withIndex("by_org", (q) => q.eq("orgId", this.orgId))
        .take(CURSORS_READ);
      for (const row of rows) this.cursors.set(`${row.laneId}|${row.negPriority}`, row);
      this.cursorsRead = true;
    }
    return this.cursors.get(`${laneId}|${level}`) ?? null;
  }

  /** Do more client keys than one have jobs at this level (so far as the round has read)? */
  private competing(level: number): boolean {
    return (this.keysAt.get(level)?.size ?? 0) > 1;
  }

  /** Do more fairness keys than one of this client key have jobs at this level? */
  private competingFlows(level: number, clientKeyId: Id<"clientKeys"> | undefined): boolean {
    return (this.flowsAt.get(`${level}|${keyId(clientKeyId)}`)?.size ?? 0) > 1;
  }

  private async headOf(flow: Flow): Promise<FlowHead & { flow: Flow }> {
    const level = flow.lane.level!;
    const laneId = flow.lane.lane._id;
    const ck = flow.key.clientKeyId;
    const keyPass = this.competing(level) ? effectivePass((await this.keyPass(level, ck)).pass, (await this.clock(laneId, level, "keys")).vtime) : 0;
    const flowPass = this.competingFlows(level, ck)
      ? effectivePass((await this.flowPass(level, ck, flow.fairnessKey)).pass, (await this.clock(laneId, level, "flows", ck)).vtime)
      : 0;
    return {
      flow,
      lane: laneId,
      clientKey: keyId(ck),
      fairnessKey: flow.fairnessKey ?? "",
      keyPass,
      flowPass,
      availableAt: flow.head!.availableAt,
      createdAt: flow.head!._creationTime,
    };
  }

  /** Move the lane to its next level while its current one has no head the round may hand out. */
  private async settleLevel(state: LaneState): Promise<void> {
    while (state.open && state.level !== null && !state.flows.some((f) => f.head && !f.key.blocked)) {
      if (state.cutLevel) {
        state.open = false;
        return;
      }
      const next = await firstReady(this.ctx, state.lane._id, state.level);
      state.level = next?.negPriority ?? null;
      state.flows = [];
      if (next) await this.readLevel(state, next);
    }
  }

  /**
   * Read the flows of the lane's current level (`first`: its first head) and their keys. A level with more flows
   * than a round reads is read from where the last round stopped (its cursor), round again to it.
   */
  private async readLevel(state: LaneState, first: Doc<"jobs">): Promise<void> {
    const level = state.level!;
    const laneId = state.lane._id;
    const cursorId = `${laneId}|${level}`;
    let read = await levelFlows(this.ctx, first, null, state.maxFlows, state.budget);
    if (read.cut) {
      const cursor = await this.cursorOf(laneId, level);
      if (cursor) read = await levelFlows(this.ctx, first, cursor.after, state.maxFlows, new ByteBudget(state.budget.limit));
      this.cut = state.cutLevel = true;
      this.cursorMoves.set(cursorId, { lane: state, level, after: read.last });
    } else if (await this.cursorOf(laneId, level, true)) this.cursorMoves.set(cursorId, { lane: state, level, after: null });
    const { heads } = read;
    for (const head of heads) {
      const key = await this.keyOf(head.clientKeyId);
      this.keysAt.set(level, (this.keysAt.get(level) ?? new Set()).add(keyId(key.clientKeyId)));
      const flows = `${level}|${keyId(key.clientKeyId)}`;
      this.flowsAt.set(flows, (this.flowsAt.get(flows) ?? new Set()).add(flowId(head.fairnessKey)));
      state.flows.push({ lane: state, key, fairnessKey: head.fairnessKey, head, passed: new Set() });
    }
  }

  /** May one more job of this key start now? At its limit as counted, its newest ends are counted in first. */
  private async mayStart(key: KeyState): Promise<boolean> {
    if (key.maxRunning === undefined || key.clientKeyId === undefined) return true;
    if (key.running < key.maxRunning) return true;
    if (!key.exact) {
      key.exact = true;
      key.running = (await exactRunning(this.ctx, key.clientKeyId, key.running - key.started)) + key.started;
      if (key.running < key.maxRunning) return true;
    }
    key.blocked = true;
    this.limited = true;
    return false;
  }

  private async keyOf(clientKeyId: Id<"clientKeys"> | undefined): Promise<KeyState> {
    const id = keyId(clientKeyId);
    const known = this.keys.get(id);
    if (known) return known;
    const row = clientKeyId ? await this.ctx.db.get(clientKeyId) : null;
    const limited = clientKeyId !== undefined && row?.maxRunning !== undefined;
    const state: KeyState = {
      clientKeyId,
      weight: row?.weight ?? 1,
      maxRunning: row?.maxRunning,
      overrides: row?.fairnessOverrides ?? 0,
      running: limited ? ((await keyRunningRow(this.ctx, clientKeyId))?.running ?? 0) : 0,
      started: 0,
      exact: false,
      blocked: false,
    };
    this.keys.set(id, state);
    return state;
  }

  private async flowWeight(key: KeyState, fairnessKey: string | undefined): Promise<number> {
    if (key.overrides === 0 || fairnessKey === undefined || key.clientKeyId === undefined) return 1;
    const id = `${key.clientKeyId}|${fairnessKey}`;
    const known = this.flowWeights.get(id);
    if (known !== undefined) return known;
    const row = await this.ctx.db
      .query("fairnessWeights")
      .withIndex("by_client_key", (q) => q.eq("clientKeyId", key.clientKeyId!).eq("fairnessKey", fairnessKey))
      .unique();
    this.flowWeights.set(id, row?.weight ?? 1);
    return row?.weight ?? 1;
  }

  /** A client key's pass at a level. */
  private async keyPass(level: number, clientKeyId: Id<"clientKeys"> | undefined): Promise<Pass> {
    return await this.pass(level, "key", clientKeyId, undefined);
  }

  /** A fairness key's pass inside its client key at a level (no fairnessKey: the key's jobs without one). */
  private async flowPass(level: number, clientKeyId: Id<"clientKeys"> | undefined, fairnessKey: string | undefined): Promise<Pass> {
    return await this.pass(level, "flow", clientKeyId, fairnessKey);
  }

  /** Read once per round, however many flows ask at the same time; the passes to save are kept in `passes`. */
  private pass(level: number, scope: "key" | "flow", clientKeyId: Id<"clientKeys"> | undefined, fairnessKey: string | undefined): Promise<Pass> {
    const id = passId(level, scope, clientKeyId, fairnessKey);
    let loading = this.passLoads.get(id);
    if (!loading) this.passLoads.set(id, (loading = this.loadPass(id, level, scope, clientKeyId, fairnessKey)));
    return loading;
  }

  private async loadPass(id: string, level: number, scope: "key" | "flow", clientKeyId: Id<"clientKeys"> | undefined, fairnessKey: string | undefined): Promise<Pass> {
    const fields: PassFields = { orgId: this.orgId, negPriority: level, scope, clientKeyId, fairnessKey };
    let row: Doc<"fairPasses"> | null = null;
    // every client key's pass at the level comes in one read (the org's keys are few); fairness keys' one by one
    const keyRows = scope === "key" ? await this.keyPassesAt(level) : null;
    if (keyRows && keyRows.complete) row = keyRows.rows.get(keyId(clientKeyId)) ?? null;
    else {
      row = await this.ctx.db
        .query("fairPasses")
        .withIndex("by_org_scope", (q) => q.eq("orgId", this.orgId).eq("negPriority", level).eq("scope", scope).eq("clientKeyId", clientKeyId).eq("fairnessKey", fairnessKey))
        .unique();
    }
    const pass: Pass = { row, fields, pass: row?.pass ?? 0, dirty: false };
    this.passes.set(id, pass);
    return pass;
  }

  private keyPassesAt(level: number): Promise<RowsAtOnce<Doc<"fairPasses">>> {
    let loading = this.keyPassReads.get(level);
    if (!loading) {
      loading = this.rowsAtOnce(
        this.ctx.db.query("fairPasses").withIndex("by_org_scope", (q) => q.eq("orgId", this.orgId).eq("negPriority", level).eq("scope", "key")),
        (row) => keyId(row.clientKeyId),
      );
      this.keyPassReads.set(level, loading);
    }
    return loading;
  }

  /** A lane's virtual time at a level between client keys (`keys`), or between one client key's fairness keys. */
  private clock(laneId: Id<"lanes">, level: number, scope: "keys" | "flows", clientKeyId?: Id<"clientKeys">): Promise<Clock> {
    const ck = scope === "flows" ? clientKeyId : undefined;
    const id = clockId(laneId, level, scope, ck);
    let loading = this.clockLoads.get(id);
    if (!loading) this.clockLoads.set(id, (loading = this.loadClock(id, laneId, level, scope, ck)));
    return loading;
  }

  private async loadClock(id: string, laneId: Id<"lanes">, level: number, scope: "keys" | "flows", clientKeyId: Id<"clientKeys"> | undefined): Promise<Clock> {
    // all of the lane's clocks at the level in one read: one per client key with fairness keys there, and one more
    const levelId = `${laneId}|${level}`;
    let loading = this.clockReads.get(levelId);
    if (!loading) {
      loading = this.rowsAtOnce(
        this.ctx.db.query("fairClocks").withIndex("by_lane", (q) => q.eq("laneId", laneId).eq("negPriority", level)),
        (row) => clockId(laneId, level, row.scope, row.clientKeyId),
      );
      this.clockReads.set(levelId, loading);
    }
    const rows = await loading;
    const row = rows.complete
      ? (rows.rows.get(id) ?? null)
      : await this.ctx.db
          .query("fairClocks")
          .withIndex("by_lane", (q) => q.eq("laneId", laneId).eq("negPriority", level).eq("scope", scope).eq("clientKeyId", clientKeyId))
          .unique();
    const clock: Clock = { row, fields: { orgId: this.orgId, laneId, negPriority: level, scope, clientKeyId }, vtime: row?.vtime ?? 0, dirty: false };
    this.clocks.set(id, clock);
    return clock;
  }

  /** Up to ROWS_AT_ONCE rows of a range by their ids; `complete`: that was all of it. */
  private async rowsAtOnce<T>(query: { take(n: number): Promise<T[]> }, idOf: (row: T) => string): Promise<RowsAtOnce<T>> {
    const rows = await query.take(ROWS_AT_ONCE + 1);
    return { rows: new Map(rows.slice(0, ROWS_AT_ONCE).map((row) => [idOf(row), row])), complete: rows.length <= ROWS_AT_ONCE };
  }

  private move(pass: Pass, to: number): void {
    pass.pass = to;
    pass.dirty = true;
  }

  private advance(clock: Clock, to: number): void {
    if (to <= clock.vtime) return;
    clock.vtime = to;
    clock.dirty = true;
  }
}
