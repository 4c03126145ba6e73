import { describe, expect, it } from "vitest";
import { ConvexError } from "convex/values";
import { Backoff } from "../../../extension/worker/backoff";
import { ClaimLoop } from "../../../extension/worker/claimLoop";
import type { ClaimedJob } from "../../../extension/worker/farmClient";
import { manualClock, recordingFarm, type Answers } from "./recordingFarm";

const job = (jobId: string) => ({ jobId, leaseId: `lease-${jobId}`, type: "demo.echo", payload: {}, attempt: 1, leaseMs: 30_000, leaseExpiresAt: 0 }) as unknown as ClaimedJob;
const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

/** One claim loop over a recording farm and a manual clock; `free` is what the engine says it has room for. */
function loop(answers: Answers = {}, options: { free?: number | undefined; stops?: boolean; bytesLeft?: number } = {}) {
  const farm = recordingFarm(answers);
  const clock = manualClock();
  const started: string[] = [];
  let declared = 0;
  const room = { free: "free" in options ? options.free : 2 };
  const claims = new ClaimLoop({
    client: farm.client,
    clock,
    backoff: new Backoff(100, 1_000, () => 0.5),
    capabilities: () => ["demo.echo"],
    freeSlots: () => room.free,
    bytesLeft: () => options.bytesLeft,
    declare: () => void declared++,
    start: (j) => void started.push(j.jobId),
    failed: () => options.stops === true,
  });
  return { farm, clock, claims, started, room, declared: () => declared };
}

describe("ClaimLoop, one transition per test", () => {
  it("says with each claim what its jobs may still download (a metered connection), and nothing about it without a limit", async () => {
    const metered = loop({ claim: () => [job("j1")] }, { bytesLeft: 1_234.9 });
    metered.claims.rang(["j1"], false);
    expect(metered.farm.sent("claim")).toEqual([{ capabilities: ["demo.echo"], max: 1, maxBytes: 1_234 }]);
    await metered.claims.settled();
  });

  it("idle → claiming on a doorbell with offers: claims exactly that many, and starts what it got", async () => {
    const { farm, claims, started } = loop({ claim: () => [job("j1")] });
    claims.rang(["j1"], false);
    expect(claims.current.kind).toBe("claiming");
    expect(farm.sent("claim")).toEqual([{ capabilities: ["demo.echo"], max: 1 }]);
    await claims.settled();
    expect(started).toEqual(["j1"]);
    expect(claims.current).toEqual({ kind: "idle", fullDue: false });
    expect(claims.offered).toEqual([]);
  });

  it("idle stays idle on a doorbell without offers: nothing is sent", () => {
    const { farm, claims } = loop();
    claims.rang([], false);
    expect(claims.current).toEqual({ kind: "idle", fullDue: false });
    expect(farm.calls).toEqual([]);
  });

  it("a resync is a full claim: up to every free slot, whatever the offers", () => {
    const { farm, claims } = loop();
    claims.rang([], true);
    expect(farm.sent("claim")).toEqual([{ capabilities: ["demo.echo"], max: 2 }]);
  });

  it("a full claim with no room is answered by a declaration, not a claim", () => {
    const { farm, claims, declared } = loop({}, { free: 0 });
    claims.wantFull();
    expect(farm.calls).toEqual([]);
    expect(declared()).toBe(1);
    expect(claims.current).toEqual({ kind: "idle", fullDue: false });
  });

  it("takes no work while the engine does not (paused, held for memory): the full claim stays due", () => {
    const { farm, claims } = loop({}, { free: undefined });
    claims.wantFull();
    expect(farm.calls).toEqual([]);
    expect(claims.current).toEqual({ kind: "idle", fullDue: true });
  });

  it("claiming: a full claim wanted meanwhile waits for the answer, then is made", async () => {
    const { farm, claims } = loop();
    claims.rang(["j1"], false);
    claims.wantFull();
    expect(farm.sent("claim")).toHaveLength(1);
    expect(claims.current).toMatchObject({ kind: "claiming", fullDue: true });
    await settle();
    expect(farm.sent("claim")).toEqual([
      { capabilities: ["demo.echo"], max: 1 },
      { capabilities: ["demo.echo"], max: 2 },
    ]);
  });

  it("an offer seen is kept when a newer doorbell value arrived while claiming (the claim took another)", async () => {
    let answer!: (jobs: ClaimedJob[]) => void;
    const { claims } = loop({ claim: () => new Promise((resolve) => (answer = resolve)) });
    claims.rang(["j1"], false);
    claims.rang(["j1", "j2"], false);
    answer([job("j2")]);
    await settle();
    expect(claims.offered).toEqual(["j1"]);
  });

  it("claiming → backingOff on a failed claim: retries after the backoff, as a full claim if it was one", async () => {
    let calls = 0;
    const { farm, clock, claims } = loop({ claim: () => (++calls === 1 ? Promise.reject(new Error("network")) : []) });
    claims.wantFull();
    await settle();
    expect(claims.current).toMatchObject({ kind: "backingOff", fullDue: true });
    expect(clock.pending).toHaveLength(1);
    const [delay] = clock.pending;
    clock.advance(delay - 1);
    expect(farm.sent("claim")).toHaveLength(1);
    clock.advance(1);
    expect(farm.sent("claim")).toEqual([
      { capabilities: ["demo.echo"], max: 2 },
      { capabilities: ["demo.echo"], max: 2 },
    ]);
  });

  it("a failed claim that stopped the engine schedules no retry", async () => {
    const { clock, claims } = loop({ claim: () => Promise.reject(new ConvexError({ code: "revoked", message: "no" })) }, { stops: true });
    claims.wantFull();
    await settle();
    expect(claims.current.kind).toBe("idle");
    expect(clock.pending).toEqual([]);
  });

  it("backingOff: holding the retry (a pause) clears the timer and keeps the full claim due", async () => {
    const { clock, claims } = loop({ claim: () => Promise.reject(new Error("network")) });
    claims.wantFull();
    await settle();
    claims.holdRetry();
    expect(clock.pending).toEqual([]);
    expect(claims.current).toEqual({ kind: "idle", fullDue: true });
  });

  it("reset forgets offers and the due claim", () => {
    const { claims } = loop({}, { free: undefined });
    claims.rang(["j1"], true);
    claims.reset();
    expect(claims.offered).toEqual([]);
    expect(claims.current).toEqual({ kind: "idle", fullDue: false });
  });
});
