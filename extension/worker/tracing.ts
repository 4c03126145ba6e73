import type { ClaimedJob } from "./farmClient";
import type { JobOutcome } from "./jobEnd";

/**
 * What the engine asks of a tracer (extension/tracing/ holds the OpenTelemetry one, loaded only when traces are
 * configured): one span per run, begun when the claim that handed the job out was sent and ended once the run's
 * end is reported (claim → run → complete). `traceparent`: the span's own context, which the job's process gets.
 */
export type RunSpan = { readonly traceparent: string | undefined; end(outcome: JobOutcome): void };

export type RunTracer = {
  begin(job: ClaimedJob, claimedAt: number): RunSpan;
  /** Send what is left and stop (the engine's owner calls it after the engine stopped). */
  close(): Promise<void>;
};
