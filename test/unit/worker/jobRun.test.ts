import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { ClaimedJob } from "../../../extension/worker/farmClient";
import { recordingFarm as recorder } from "./recordingFarm";
import type { Handler, HandlerContext } from "../../../extension/worker/handler";
import { JobRun, type AbortReason, type JobRunOptions } from "../../../extension/worker/jobRun";

const LEASE_MS = 300; // a heartbeat every 100 ms
const OPTIONS: JobRunOptions = { jobTimeoutMs: 1_000, graceMs: 200, maxResultBytes: 1_000_000, maxChunkBytes: 8_000, outputFlushMs: 50, suspendLimitMs: 60_000 };
const JOB: ClaimedJob = { jobId: "j1" as ClaimedJob["jobId"], leaseId: "l1", type: "test.job", payload: {}, attempt: 1, leaseMs: LEASE_MS, leaseExpiresAt: Date.now() + LEASE_MS };

/** A farm that records every write; heartbeats wait until the test lets them answer when `holdHeartbeats` is on. */
function recordingFarm() {
  const calls: string[] = [];
  const heldHeartbeats: Array<() => void> = [];
  let holdHeartbeats = false;
  const { client } = recorder({
    heartbeat: ({ leaseId }) => {
      calls.push(`heartbeat ${leaseId}`);
      const answer = { cancel: false, leaseExpiresAt: Date.now() + LEASE_MS };
      if (!holdHeartbeats) return Promise.resolve(answer);
      return new Promise((resolve) => heldHeartbeats.push(() => resolve(answer)));
    },
    output: ({ chunk }) => (calls.push(`output ${chunk}`), { seq: 1 }),
    complete: () => (calls.push("complete"), { status: "succeeded" }),
    fail: ({ error }) => (calls.push(`fail ${error}`), { status: "dead", availableAt: undefined }),
    release: () => (calls.push("release"), { status: "pending" }),
  });
  return {
    client,
    calls,
    count: (prefix: string) => calls.filter((c) => c.startsWith(prefix)).length,
    holdHeartbeats: () => (holdHeartbeats = true),
    answerHeartbeats: () => heldHeartbeats.splice(0).forEach((answer) => answer()),
  };
}

/** A handler that ignores its abort signal and keeps reporting until the test is done with it. */
function stubbornHandler() {
  let ctx: HandlerContext | undefined;
  const handler: Handler = { type: "test.job", run: (_payload, c) => ((ctx = c), new Promise(() => undefined)) };
  return { handler, report: (text: string) => (ctx!.progress(0.5, text), ctx!.output(`${text}\n`)) };
}

function startRun(handler: Handler, farm: ReturnType<typeof recordingFarm>, options: Partial<JobRunOptions> = {}) {
  const events: string[] = [];
  const run = new JobRun(JOB, handler, farm.client, { ...OPTIONS, ...options }, {
    onProgress: (_p, status) => events.push(`progress ${status}`),
    onOutput: (text) => events.push(`output ${text.trim()}`),
    onError: (message) => events.push(`error ${message}`),
    onKeyError: () => events.push("key error"),
  });
  return { run, events, outcome: run.run() };
}

describe("a job run after its job ended", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it.each<[string, AbortReason | undefined, string]>([
    ["given back (or the worker stopped)", "stop", "released"],
    ["canceled", "cancel", "canceled"],
    ["timed out", undefined, "failed"],
  ])("%s: its handler's progress, output and heartbeats reach nobody", async (_how, reason, kind) => {
    const farm = recordingFarm();
    const stubborn = stubbornHandler();
    const { events, run, outcome } = startRun(stubborn.handler, farm);
    await vi.advanceTimersByTimeAsync(LEASE_MS);
    stubborn.report("working");
    await vi.advanceTimersByTimeAsync(100);
    expect(events).toContain("progress working");
    expect(farm.count("output working")).toBe(1);
    expect(farm.count("heartbeat")).toBeGreaterThan(0);

    // A heartbeat is on its way when the job ends: its answer must not start the heartbeats again.
    farm.holdHeartbeats();
    await vi.advanceTimersByTimeAsync(100);
    if (reason) run.abort(reason);
    await vi.advanceTimersByTimeAsync(OPTIONS.jobTimeoutMs + OPTIONS.graceMs);
    expect((await outcome).kind).toBe(kind);
    farm.answerHeartbeats();

    const eventsAtEnd = events.length;
    const callsAtEnd = farm.calls.length;
    stubborn.report("still going");
    await vi.advanceTimersByTimeAsync(5 * LEASE_MS);
    expect(events.slice(eventsAtEnd)).toEqual([]);
    expect(farm.calls.slice(callsAtEnd)).toEqual([]);
    expect(vi.getTimerCount()).toBe(0); // no heartbeat timer left waking up for a job that ended
  });
});

/** A handler that never finishes and can be frozen, recording what was asked of its freezer. */
function freezableHandler() {
  const said: string[] = [];
  const handler: Handler = {
    type: "test.job",
    run: (_payload, ctx) => {
      ctx.setFreezer?.({ freeze: () => said.push("freeze"), thaw: () => said.push("thaw") });
      return new Promise(() => undefined);
    },
  };
  return { handler, said };
}

describe("a job run's phase (running, aborting, ended), one transition per test", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("running → aborting for its time limit: heartbeats go on while the handler winds down (it still holds the lease)", async () => {
    const farm = recordingFarm();
    const { outcome } = startRun(stubbornHandler().handler, farm, { graceMs: 1_000 });
    await vi.advanceTimersByTimeAsync(OPTIONS.jobTimeoutMs);
    const atTimeout = farm.count("heartbeat");
    await vi.advanceTimersByTimeAsync(999);
    expect(farm.count("heartbeat")).toBe(atTimeout + 9); // one every 100 ms
    await vi.advanceTimersByTimeAsync(1);
    expect((await outcome).kind).toBe("failed");
  });

  it("running → aborting for a cancel: heartbeats stop after the one already due", async () => {
    const farm = recordingFarm();
    const { run, outcome } = startRun(stubbornHandler().handler, farm, { graceMs: 1_000 });
    await vi.advanceTimersByTimeAsync(LEASE_MS);
    const atCancel = farm.count("heartbeat");
    run.abort("cancel");
    await vi.advanceTimersByTimeAsync(999);
    // the one already due goes out; none after it
    expect(farm.count("heartbeat")).toBe(atCancel + 1);
    await vi.advanceTimersByTimeAsync(1);
    expect((await outcome).kind).toBe("canceled");
  });

  it("frozen → aborting (given back): reads as frozen until its end is written, then not", async () => {
    const farm = recordingFarm();
    const frozen = freezableHandler();
    const { run, outcome } = startRun(frozen.handler, farm);
    await vi.advanceTimersByTimeAsync(0);
    expect(run.suspend()).toBe(true);
    const since = run.suspendedSince;
    expect(since).toBeDefined();
    run.abort("yield");
    expect(run.suspendedSince).toBe(since);
    expect((await outcome).kind).toBe("released");
    expect(run.suspendedSince).toBeUndefined();
  });

  it("aborting: a suspend freezes nothing and asks for no give-back; a thaw thaws nothing", async () => {
    const farm = recordingFarm();
    const frozen = freezableHandler();
    const { run, outcome } = startRun(frozen.handler, farm);
    await vi.advanceTimersByTimeAsync(0);
    run.abort("cancel");
    expect(run.suspend()).toBe(true);
    expect(run.suspendedSince).toBeUndefined();
    run.thaw();
    expect(frozen.said).toEqual([]);
    await vi.advanceTimersByTimeAsync(OPTIONS.graceMs);
    expect((await outcome).kind).toBe("canceled");
  });

  it("frozen, then aborting, then thawed: no longer frozen, and its freezer is not thawed (the handler is on its way out)", async () => {
    const farm = recordingFarm();
    const frozen = freezableHandler();
    const { run, outcome } = startRun(frozen.handler, farm);
    await vi.advanceTimersByTimeAsync(0);
    run.suspend();
    run.abort("cancel");
    run.thaw();
    expect(run.suspendedSince).toBeUndefined();
    expect(frozen.said).toEqual(["freeze"]);
    await vi.advanceTimersByTimeAsync(OPTIONS.graceMs);
    expect((await outcome).kind).toBe("canceled");
  });
});
