import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { HandlerError } from "../../../extension/worker/errors";
import type { ClaimedJob, FarmClient } from "../../../extension/worker/farmClient";
import { recordingFarm } from "./recordingFarm";
import type { Handler, HandlerContext } from "../../../extension/worker/handler";
import { JobRun } from "../../../extension/worker/jobRun";

const APP = { name: "render", version: 3, sha256: "a".repeat(64), memoryMB: 64, timeoutMs: 60_000 };
const JOB: ClaimedJob = {
  jobId: "j1" as ClaimedJob["jobId"],
  leaseId: "l1",
  type: "app.render",
  payload: { n: 1 },
  attempt: 2,
  leaseMs: 30_000,
  leaseExpiresAt: Date.now() + 30_000,
  app: APP,
  checkpoint: "UkVTVU1F",
};

function farm() {
  const calls: string[] = [];
  const { client } = recordingFarm({
    checkpoint: ({ leaseId, data }) => (calls.push(`checkpoint ${leaseId} ${data}`), { bytes: data.length }),
    complete: () => (calls.push("complete"), { status: "succeeded" }),
    fail: ({ error, retryable }) => (calls.push(`fail ${retryable} ${error}`), { status: "dead", availableAt: undefined }),
    release: () => (calls.push("release"), { status: "pending" }),
  });
  return { client, calls };
}

/** A handler the test drives: it hears the context, and ends when the test says so. */
function drivenHandler() {
  let ctx: HandlerContext | undefined;
  let end: ((value: unknown) => void) | undefined;
  let failWith: ((e: unknown) => void) | undefined;
  const handler: Handler = {
    type: "apps",
    run: (_payload, c) =>
      new Promise((resolve, reject) => {
        ctx = c;
        end = resolve;
        failWith = reject;
      }),
  };
  return { handler, ctx: () => ctx!, end: (v: unknown) => end!(v), fail: (e: unknown) => failWith!(e) };
}

function start(handler: Handler, client: FarmClient) {
  const run = new JobRun(JOB, handler, client, { jobTimeoutMs: 1_000, graceMs: 100, maxResultBytes: 1e6, maxChunkBytes: 8_000, outputFlushMs: 50, checkpointEveryMs: 5_000, suspendLimitMs: 600_000 }, {
    onProgress: () => undefined,
    onOutput: () => undefined,
    onError: () => undefined,
    onKeyError: () => undefined,
  });
  return { run, outcome: run.run() };
}

describe("a job run's app pin and checkpoints", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("hands the handler the pin and the claimed checkpoint, and uploads the checkpoints it saves, throttled", async () => {
    const f = farm();
    const h = drivenHandler();
    const { outcome } = start(h.handler, f.client);
    await vi.advanceTimersByTimeAsync(0);
    expect(h.ctx()).toMatchObject({ app: APP, checkpoint: "UkVTVU1F", attempt: 2 });
    h.ctx().saveCheckpoint!("AAAA");
    h.ctx().saveCheckpoint!("BBBB");
    await vi.advanceTimersByTimeAsync(1_000);
    expect(f.calls).toEqual(["checkpoint l1 AAAA"]);
    await vi.advanceTimersByTimeAsync(4_000);
    expect(f.calls).toEqual(["checkpoint l1 AAAA", "checkpoint l1 BBBB"]);
    h.ctx().saveCheckpoint!("CCCC");
    h.end({ done: true });
    expect(await outcome).toMatchObject({ kind: "succeeded" });
    // a finished job's last checkpoint is not worth a write
    expect(f.calls).toEqual(["checkpoint l1 AAAA", "checkpoint l1 BBBB", "complete"]);
  });

  it("sends the checkpoint still waiting before a retryable failure, and none before a final one", async () => {
    const retried = farm();
    const a = drivenHandler();
    const first = start(a.handler, retried.client);
    await vi.advanceTimersByTimeAsync(0);
    a.ctx().saveCheckpoint!("AAAA");
    a.ctx().saveCheckpoint!("BBBB");
    a.fail(new HandlerError("crashed", { retryable: true }));
    await first.outcome;
    expect(retried.calls).toEqual(["checkpoint l1 AAAA", "checkpoint l1 BBBB", "fail true crashed"]);

    const final = farm();
    const b = drivenHandler();
    const second = start(b.handler, final.client);
    await vi.advanceTimersByTimeAsync(0);
    b.ctx().saveCheckpoint!("AAAA");
    b.ctx().saveCheckpoint!("BBBB");
    b.fail(new HandlerError("bad input", { retryable: false }));
    await second.outcome;
    expect(final.calls).toEqual(["checkpoint l1 AAAA", "fail false bad input"]);
  });

  it("sends the checkpoint still waiting before giving the job back", async () => {
    const f = farm();
    const h = drivenHandler();
    const { run, outcome } = start(h.handler, f.client);
    await vi.advanceTimersByTimeAsync(0);
    h.ctx().saveCheckpoint!("AAAA");
    h.ctx().saveCheckpoint!("BBBB");
    run.abort("stop");
    expect(await outcome).toEqual({ kind: "released" });
    expect(f.calls).toEqual(["checkpoint l1 AAAA", "checkpoint l1 BBBB", "release"]);
  });

  it("an app job's time limit is the app's own (plus slack), not the worker's default", async () => {
    const f = farm();
    const h = drivenHandler();
    const { outcome } = start(h.handler, f.client);
    await vi.advanceTimersByTimeAsync(5_000); // past the worker's 1 s default
    expect(f.calls).toEqual([]);
    await vi.advanceTimersByTimeAsync(APP.timeoutMs + 10_000);
    expect(await outcome).toMatchObject({ kind: "failed", retryable: false });
  });
});
