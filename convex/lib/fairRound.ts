import type { Doc, Id } from "../_generated/dataModel";
import type { MutationCtx } from "../_generated/server";
import { ByteBudget, TX_BUDGET } from "./budget";
import { FAIR } from "./fairLimits";
import { firstReady, flowAfter, flowKeyOf, levelFlows, type FlowKey } from "./fairQueue";
import { effectivePass, nextPass, pickFlow, type FlowHead } from "./fairShare";
import { addKeyRunning, exactRunning, keyRunningRow } from "./keyRunning";

/**
 * One round of handing out ready jobs in fair-share order (lib/fairShare.ts), for the dispatcher and for a claim
 * that takes lane heads itself: it reads each lane's flows at its best priority level, their passes and the
 * lanes' virtual times, and offers the best head (`next`); the caller hands it out (`took`), passes over it
 * (`skip`) or gives up on its lane (`dropLane`). A client key at its maxRunning is held back for the round. `save`
 * writes what moved: passes, virtual times, the keys' running counts. Reads O(lanes + flows + jobs handed out).
 */

/** A client key as the round uses it; `undefined` stands for jobs submitted without one (never limited). */
type KeyState = {
  clientKeyId?: Id<"clientKeys">;
  name: string;
  weight: number;
  maxRunning?: number;
  overrides: number;
  /** running jobs and instances as counted (at most), plus those handed out in this round */
  running: number;
  started: number;
  /** the unfolded ends were counted in (exactRunning) */
  exact: boolean;
  blocked: boolean;
};

type PassFields = Omit<Doc<"fairPasses">, "_id" | "_creationTime" | "pass" | "at">;
type ClockFields = Omit<Doc<"fairClocks">, "_id" | "_creationTime" | "vtime" | "after">;
/** A pass or a lane's clock as read (no row yet: 0), and whether the round moved it. */
type Pass = { row: Doc<"fairPasses"> | null; fields: PassFields; pass: number; dirty: boolean };
/** `after`: undefined leaves the stored one, null clears it. */
type Clock = { row: Doc<"fairClocks"> | null; fields: ClockFields; vtime: number; after?: FlowKey | null; dirty: boolean };

type LaneState = {
  lane: Doc<"lanes">;
  /** its current priority level (negPriority), null when it has nothing ready left */
  level: number | null;
  flows: Flow[];
  open: boolean;
  /** its level's flows were more than it may read: it ends with them this round (never a lower level before them) */
  cutLevel: boolean;
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
  flowWeight: number;
};

const keyId = (clientKeyId: Id<"clientKeys"> | undefined) => clientKeyId ?? "";

export class FairRound {
  private readonly lanes: LaneState[] = [];
  private readonly keys = new Map<string, KeyState>();
  private readonly passes = new Map<string, Pass>();
  private readonly clocks = new Map<string, Clock>();
  /** the client keys seen per level, and the fairness keys seen per level and client key: who competes */
  private readonly keysAt = new Map<number, Set<string>>();
  private readonly flowsAt = new Map<string, Set<string>>();
  /** a lane's flows were more than a round reads: another round goes on after them */
  cut = false;
  /** some key was held back at its maxRunning */
  limited = false;

  private constructor(
    private readonly ctx: MutationCtx,
    private readonly orgId: Id<"orgs">,
    private readonly now: number,
  ) {}

  /** The round over these lanes: each lane's first ready job is read now, its flows when its level comes up. */
  static async open(ctx: MutationCtx, orgId: Id<"orgs">, lanes: Doc<"lanes">[], now: number): Promise<FairRound> {
    const round = new FairRound(ctx, orgId, now);
    const firsts = await Promise.all(lanes.map((lane) => firstReady(ctx, lane._id)));
    const withWork = firsts.filter((f) => f !== null).length;
    // every lane with work gets its part of the round's reading, so one lane of many flows cannot starve the others
    const maxFlows = Math.max(8, Math.floor(FAIR.flowsPerRound / Math.max(1, withWork)));
    const bytes = Math.max(64 * 1024, Math.floor(TX_BUDGET.rangeReadBytes / Math.max(1, withWork)));
    for (const [i, lane] of lanes.entries()) {
      const first = firsts[i];
      if (!first) continue;
      const state: LaneState = { lane, level: first.negPriority, flows: [], open: true, cutLevel: false, budget: new ByteBudget(bytes), maxFlows };
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
      const heads: Array<FlowHead & { flow: Flow }> = [];
      for (const state of open) {
        if (state.level !== level) continue;
        for (const flow of state.flows) if (flow.head && !flow.key.blocked) heads.push(this.headOf(flow));
      }
      const best = pickFlow(heads)!.flow;
      if (await this.mayStart(best.key)) return best;
    }
  }

  /** The head was handed out (offered or leased): its key's and flow's passes move on, and the lane's clocks. */
  async took(flow: Flow): Promise<void> {
    const { lane, key } = flow;
    const level = lane.level!;
    const keyPass = this.pass(level, "key", key.clientKeyId);
    const flowPass = this.pass(level, "flow", key.clientKeyId, flow.fairnessKey);
    const laneClock = this.clock(lane.lane._id, level, "keys");
    const keyClock = this.clock(lane.lane._id, level, "flows", key.clientKeyId);
    const keyEffective = effectivePass(keyPass.pass, laneClock.vtime);
    const flowEffective = effectivePass(flowPass.pass, keyClock.vtime);
    this.move(keyPass, nextPass(keyEffective, key.weight));
    this.move(flowPass, nextPass(flowEffective, flow.flowWeight));
    this.advance(laneClock, keyEffective);
    this.advance(keyClock, flowEffective);
    key.running++;
    key.started++;
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
  }

  /**
   * Write the passes and virtual times that moved, and count the jobs handed out against their limited keys. A
   * level where one client key had jobs (or a client key with one fairness key) had nobody to share with: its
   * passes need not move, so a farm with one key writes nothing here. (When another key comes, both stand where
   * they last competed, within one stride of each other: no credit banked.)
   */
  async save(): Promise<void> {
    for (const pass of this.passes.values()) {
      if (!pass.dirty || !this.competing(pass.fields.negPriority, pass.fields.scope === "key" ? undefined : pass.fields.clientKeyId, pass.fields.scope === "flow")) continue;
      if (pass.row) await this.ctx.db.patch(pass.row._id, { pass: pass.pass, at: this.now });
      else await this.ctx.db.insert("fairPasses", { ...pass.fields, pass: pass.pass, at: this.now });
    }
    for (const clock of this.clocks.values()) {
      const moved = clock.dirty && this.competing(clock.fields.negPriority, clock.fields.clientKeyId, clock.fields.scope === "flows");
      if (!moved && clock.after === undefined) continue;
      const after = clock.after === undefined ? {} : { after: clock.after ?? undefined };
      const vtime = moved ? clock.vtime : (clock.row?.vtime ?? 0);
      if (clock.row) await this.ctx.db.patch(clock.row._id, { vtime, ...after });
      else await this.ctx.db.insert("fairClocks", { ...clock.fields, vtime, ...(clock.after ? { after: clock.after } : {}) });
    }
    for (const key of this.keys.values()) {
      if (key.clientKeyId && key.maxRunning !== undefined && key.started > 0) await addKeyRunning(this.ctx, this.orgId, key.clientKeyId, key.started);
    }
  }

  /** Did more than one client key (`flows`: more than one fairness key of this client key) have jobs at this level? */
  private competing(level: number, clientKeyId: Id<"clientKeys"> | undefined, flows: boolean): boolean {
    const seen = flows ? this.flowsAt.get(`${level}|${keyId(clientKeyId)}`) : this.keysAt.get(level);
    return (seen?.size ?? 0) > 1;
  }

  /** How many jobs the round handed out per client key (none: jobs without a key). */
  startedPerKey(): Map<Id<"clientKeys"> | undefined, number> {
    return new Map([...this.keys.values()].filter((k) => k.started > 0).map((k) => [k.clientKeyId, k.started]));
  }

  private headOf(flow: Flow): FlowHead & { flow: Flow } {
    const level = flow.lane.level!;
    const laneId = flow.lane.lane._id;
    const ck = flow.key.clientKeyId;
    return {
      flow,
      lane: laneId,
      clientKey: keyId(ck),
      fairnessKey: flow.fairnessKey ?? "",
      keyPass: effectivePass(this.pass(level, "key", ck).pass, this.clock(laneId, level, "keys").vtime),
      flowPass: effectivePass(this.pass(level, "flow", ck, flow.fairnessKey).pass, this.clock(laneId, level, "flows", ck).vtime),
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

  /** Read the flows of the lane's current level (`first`: its first head), their keys, passes and weights, and the lane's clocks. */
  private async readLevel(state: LaneState, first: Doc<"jobs">): Promise<void> {
    const level = state.level!;
    const laneId = state.lane._id;
    const laneClock = await this.loadClock(laneId, level, "keys");
    const start = laneClock.row?.after ?? null;
    const { heads, cut, last } = await levelFlows(this.ctx, first, start, state.maxFlows, state.budget);
    if (cut) this.cut = state.cutLevel = true;
    // where the next round starts reading this level: after the last flow read if it stopped early, else anywhere
    if (cut || start !== null) {
      laneClock.after = cut ? last : null;
      laneClock.dirty = true;
    }
    for (const head of heads) {
      const key = await this.keyOf(head.clientKeyId);
      const keys = this.keysAt.get(level) ?? new Set();
      this.keysAt.set(level, keys.add(keyId(key.clientKeyId)));
      const flowsId = `${level}|${keyId(key.clientKeyId)}`;
      const flows = this.flowsAt.get(flowsId) ?? new Set();
      this.flowsAt.set(flowsId, flows.add(head.fairnessKey === undefined ? "-" : `+${head.fairnessKey}`));
      await this.loadPass(level, "key", key.clientKeyId);
      await this.loadPass(level, "flow", key.clientKeyId, head.fairnessKey);
      await this.loadClock(laneId, level, "flows", key.clientKeyId);
      const flowWeight = await this.flowWeight(key, head.fairnessKey);
      state.flows.push({ lane: state, key, fairnessKey: flowKeyOf(head).fairnessKey, head, passed: new Set(), flowWeight });
    }
  }

  /** May one more job of this key start now? At its limit as counted, its newest ends are counted in first. */
  private async mayStart(key: KeyState): Promise<boolean> {
    if (key.maxRunning === undefined || key.clientKeyId === undefined) return true;
    if (key.running < key.maxRunning) return true;
    if (!key.exact) {
      key.exact = true;
      const started = key.started;
      key.running = (await exactRunning(this.ctx, key.clientKeyId, key.running - started)) + started;
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
    const limited = row?.maxRunning !== undefined;
    const state: KeyState = {
      clientKeyId,
      name: row?.name ?? "",
      weight: row?.weight ?? 1,
      maxRunning: row?.maxRunning,
      overrides: row?.fairnessOverrides ?? 0,
      running: limited ? ((await keyRunningRow(this.ctx, clientKeyId!))?.running ?? 0) : 0,
      started: 0,
      exact: false,
      blocked: false,
    };
    this.keys.set(id, state);
    return state;
  }

  private async flowWeight(key: KeyState, fairnessKey: string | undefined): Promise<number> {
    if (key.overrides === 0 || fairnessKey === undefined || key.clientKeyId === undefined) return 1;
    const row = await this.ctx.db
      .query("fairnessWeights")
      .withIndex("by_client_key", (q) => q.eq("clientKeyId", key.clientKeyId!).eq("fairnessKey", fairnessKey))
      .unique();
    return row?.weight ?? 1;
  }

  private passId(level: number, scope: "key" | "flow", clientKeyId?: Id<"clientKeys">, fairnessKey?: string): string {
    return scope === "key" ? `${level}|k|${keyId(clientKeyId)}` : `${level}|f|${keyId(clientKeyId)}|${fairnessKey === undefined ? "-" : `+${fairnessKey}`}`;
  }

  private pass(level: number, scope: "key" | "flow", clientKeyId?: Id<"clientKeys">, fairnessKey?: string): Pass {
    return this.passes.get(this.passId(level, scope, clientKeyId, fairnessKey))!;
  }

  private async loadPass(level: number, scope: "key" | "flow", clientKeyId?: Id<"clientKeys">, fairnessKey?: string): Promise<void> {
    const id = this.passId(level, scope, clientKeyId, fairnessKey);
    if (this.passes.has(id)) return;
    const row = await this.ctx.db
      .query("fairPasses")
      .withIndex("by_org_scope", (q) =>
        q.eq("orgId", this.orgId).eq("negPriority", level).eq("scope", scope).eq("clientKeyId", clientKeyId).eq("fairnessKey", scope === "key" ? undefined : fairnessKey),
      )
      .unique();
    const fields: PassFields = { orgId: this.orgId, negPriority: level, scope, clientKeyId, fairnessKey: scope === "key" ? undefined : fairnessKey };
    this.passes.set(id, { row, fields, pass: row?.pass ?? 0, dirty: false });
  }

  private clockId(laneId: Id<"lanes">, level: number, scope: "keys" | "flows", clientKeyId?: Id<"clientKeys">): string {
    return `${laneId}|${level}|${scope}|${scope === "flows" ? keyId(clientKeyId) : ""}`;
  }

  private clock(laneId: Id<"lanes">, level: number, scope: "keys" | "flows", clientKeyId?: Id<"clientKeys">): Clock {
    return this.clocks.get(this.clockId(laneId, level, scope, clientKeyId))!;
  }

  private async loadClock(laneId: Id<"lanes">, level: number, scope: "keys" | "flows", clientKeyId?: Id<"clientKeys">): Promise<Clock> {
    const id = this.clockId(laneId, level, scope, clientKeyId);
    const known = this.clocks.get(id);
    if (known) return known;
    const row = await this.ctx.db
      .query("fairClocks")
      .withIndex("by_lane", (q) => q.eq("laneId", laneId).eq("negPriority", level).eq("scope", scope).eq("clientKeyId", scope === "flows" ? clientKeyId : undefined))
      .unique();
    const fields: ClockFields = { orgId: this.orgId, laneId, negPriority: level, scope, clientKeyId: scope === "flows" ? clientKeyId : undefined };
    const clock: Clock = { row, fields, vtime: row?.vtime ?? 0, dirty: false };
    this.clocks.set(id, clock);
    return clock;
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
