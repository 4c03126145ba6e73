import { describe, expect, it } from "vitest";
import type { ClaimedJob } from "../../../extension/worker/farmClient";
import { recordingFarm } from "./recordingFarm";
import type { Handler } from "../../../extension/worker/handler";
import { JobRun, type JobRunOptions } from "../../../extension/worker/jobRun";

const OPTIONS: JobRunOptions = { jobTimeoutMs: 5_000, graceMs: 50, maxResultBytes: 1_000, maxChunkBytes: 8_000, outputFlushMs: 10, suspendLimitMs: 60_000 };
const JOB: ClaimedJob = {
  jobId: "j1" as ClaimedJob["jobId"],
  leaseId: "l1",
  type: "test.job",
  payload: {},
  attempt: 1,
  leaseMs: 60_000,
  leaseExpiresAt: Date.now() + 60_000,
};

/** A farm that keeps the end each job reported, with the cpuMs it carried. */
function endsFarm() {
  const ends: Array<{ call: "complete" | "fail"; cpuMs: number | undefined }> = [];
  const { client } = recordingFarm({
    complete: ({ cpuMs }) => (ends.push({ call: "complete", cpuMs }), { status: "succeeded" }),
    fail: ({ cpuMs }) => (ends.push({ call: "fail", cpuMs }), { status: "dead", availableAt: undefined }),
  });
  return { client, ends };
}

async function runWith(handler: Handler) {
  const farm = endsFarm();
  const callbacks = { onProgress: () => undefined, onOutput: () => undefined, onError: () => undefined, onKeyError: () => undefined };
  await new JobRun(JOB, handler, farm.client, OPTIONS, callbacks).run();
  return farm.ends;
}

describe("the CPU time a job used travels with its end (donor credit)", () => {
  it("a succeeded job sends the measured cpuMs, rounded to whole ms", async () => {
    const ends = await runWith({ type: "test.job", run: (_p, ctx) => (ctx.onCpuMs?.(1234.6), Promise.resolve("ok")) });
    expect(ends).toEqual([{ call: "complete", cpuMs: 1235 }]);
  });

  it("a failed job sends it too (the machine did the work)", async () => {
    const ends = await runWith({
      type: "test.job",
      run: (_p, ctx) => {
        ctx.onCpuMs?.(40);
        return Promise.reject(new Error("boom"));
      },
    });
    expect(ends).toEqual([{ call: "fail", cpuMs: 40 }]);
  });

  it("a result over the size cap is failed with the cpuMs", async () => {
    const ends = await runWith({ type: "test.job", run: (_p, ctx) => (ctx.onCpuMs?.(7), Promise.resolve("x".repeat(2_000))) });
    expect(ends).toEqual([{ call: "fail", cpuMs: 7 }]);
  });

  it("without a measurement (an Ollama request) nothing is sent and the server credits wall time", async () => {
    const ends = await runWith({ type: "test.job", run: () => Promise.resolve("ok") });
    expect(ends).toEqual([{ call: "complete", cpuMs: undefined }]);
  });

  it("a nonsense measurement is not sent", async () => {
    const ends = await runWith({ type: "test.job", run: (_p, ctx) => (ctx.onCpuMs?.(Number.NaN), ctx.onCpuMs?.(-5), Promise.resolve("ok")) });
    expect(ends).toEqual([{ call: "complete", cpuMs: undefined }]);
  });
});
