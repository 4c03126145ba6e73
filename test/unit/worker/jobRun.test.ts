import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { ClaimedJob } from "../../../extension/worker/farmClient";
import { recordingFarm as recorder } from "./recordingFarm";
import type { Handler, HandlerContext } from "../../../extension/worker/handler";
import { JobRun, type AbortReason, type JobRunOptions } from "../../../extension/worker/jobRun";

const LEASE_MS = 300; // a heartbeat every 100 ms
const OPTIONS: JobRunOptions = { jobTimeoutMs: 1_000, graceMs: 200, maxResultBytes: 1_000_000, maxChunkChars: 8_000, outputFlushMs: 50, suspendLimitMs: 60_000 };
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

function startRun(handler: Handler, farm: ReturnType<typeof recordingFarm>) {
  const events: string[] = [];
  const run = new JobRun(JOB, handler, farm.client, OPTIONS, {
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
