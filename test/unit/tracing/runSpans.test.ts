import { afterEach, beforeEach, expect, it, vi } from "vitest";
import type { JobOutcome } from "../../../extension/worker/jobEnd";
import type { RunTracer } from "../../../extension/worker/tracing";
import { Worker } from "../../../extension/worker/worker";
import { tracesEndpoint, workerTracer } from "../../../extension/tracing/loadTracer";
import { handler, handlersOf, ScriptedFarm } from "./../worker/scriptedFarm";

/** The engine's side of traces: one span per run, from the claim to the written end, its context handed to the job. */

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

const SUBMITTED = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

function recordingTracer() {
  const spans: Array<{ jobId: string; claimedAt: number; parent?: string; ended?: { outcome: JobOutcome["kind"]; at: number; completedBefore: boolean } }> = [];
  let completes = 0;
  const tracer: RunTracer = {
    begin(job, claimedAt) {
      const span: (typeof spans)[number] = { jobId: job.jobId, claimedAt, parent: job.traceparent };
      spans.push(span);
      return {
        traceparent: `00-4bf92f3577b34da6a3ce929d0e0e4736-${String(spans.length).padStart(16, "0")}-01`,
        end: (outcome) => (span.ended = { outcome: outcome.kind, at: Date.now(), completedBefore: completes > 0 }),
      };
    },
    close: () => Promise.resolve(),
  };
  return { tracer, spans, completed: () => completes++ };
}

it("a run's span begins when its claim was sent and ends after its end is written; the handler gets the span's context", async () => {
  const farm = new ScriptedFarm();
  const { tracer, spans, completed } = recordingTracer();
  const seen: Array<string | undefined> = [];
  const job = handler("demo.echo", (payload, ctx) => {
    seen.push(ctx.traceparent);
    return Promise.resolve(payload);
  });
  const complete = farm.complete.bind(farm);
  farm.complete = async (args) => {
    completed();
    return await complete(args);
  };
  const worker = new Worker({ client: farm, handlers: handlersOf(job), tracer });
  const sentAt = Date.now();
  farm.queue("demo.echo", { n: 1 }, 30_000, { traceparent: SUBMITTED });
  await worker.start();
  await vi.advanceTimersByTimeAsync(0);
  await vi.advanceTimersByTimeAsync(0);
  expect(spans.map((s) => [s.claimedAt, s.parent, s.ended?.outcome, s.ended?.completedBefore])).toEqual([[sentAt, SUBMITTED, "succeeded", true]]);
  expect(seen).toEqual(["00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000001-01"]);
  await worker.stop();
});

it("without a tracer the handler gets the trace context the job was submitted with, and none without one", async () => {
  const farm = new ScriptedFarm();
  const seen: Array<string | undefined> = [];
  const job = handler("demo.echo", (_p, ctx) => (seen.push(ctx.traceparent), Promise.resolve(null)));
  const worker = new Worker({ client: farm, handlers: handlersOf(job), concurrency: 2 });
  farm.queue("demo.echo", {}, 30_000, { traceparent: SUBMITTED });
  farm.queue("demo.echo");
  await worker.start();
  await vi.advanceTimersByTimeAsync(0);
  await vi.advanceTimersByTimeAsync(0);
  expect(seen.sort()).toEqual([SUBMITTED, undefined].sort());
  await worker.stop();
});

it("the OTLP traces endpoint: the traces variable as it is, else the base one with /v1/traces, else none", () => {
  expect(tracesEndpoint({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://c:4318/custom", OTEL_EXPORTER_OTLP_ENDPOINT: "http://x" })).toBe("http://c:4318/custom");
  expect(tracesEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318/" })).toBe("http://c:4318/v1/traces");
  expect(tracesEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: "  " })).toBeUndefined();
  expect(tracesEndpoint({})).toBeUndefined();
});

it("a farm that does not answer yet does not hold the tracer up: after 3 s its spans go without the worker's name", async () => {
  const neverAnswers = { query: () => new Promise<never>(() => undefined) } as unknown as Parameters<typeof workerTracer>[0]["client"];
  let ready = false;
  const loading = workerTracer({ url: "http://127.0.0.1:9/v1/traces", serviceName: "test", client: neverAnswers, apiKey: "fh_w_x" }).then((tracer) => {
    ready = true;
    return tracer;
  });
  await vi.advanceTimersByTimeAsync(2_900);
  expect(ready).toBe(false);
  await vi.advanceTimersByTimeAsync(200);
  const tracer = await loading;
  expect(ready).toBe(true);
  await tracer.close();
});
