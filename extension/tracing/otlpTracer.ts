import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, TraceFlags, type Context } from "@opentelemetry/api";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BasicTracerProvider, BatchSpanProcessor } from "@opentelemetry/sdk-trace-base";
import type { ClaimedJob } from "../worker/farmClient";
import type { JobOutcome } from "../worker/jobEnd";
import type { RunSpan, RunTracer } from "../worker/tracing";

/**
 * The OpenTelemetry tracer of the engine's runs: one CONSUMER span per run, a child of the trace the job was
 * submitted in (its traceparent) or a trace of its own, exported over OTLP/HTTP in batches. Its own bundle
 * (dist/tracing.js): the extension and the CLI load it only when traces are configured (loadTracer.ts).
 */

export type OtlpTracerOptions = {
  /** The OTLP/HTTP traces endpoint, e.g. http://collector:4318/v1/traces. */
  url: string;
  /** `service.name` of the spans' resource. */
  serviceName: string;
  /** Who runs the jobs (span attributes farmhand.worker.id and farmhand.worker.name). */
  worker: { id?: string; name?: string };
};

const TRACEPARENT = /^[0-9a-f]{2}-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** The remote parent a job's traceparent names, or the root context without one. */
function parentOf(traceparent: string | undefined): Context {
  const m = traceparent === undefined ? null : TRACEPARENT.exec(traceparent);
  if (!m) return ROOT_CONTEXT;
  return trace.setSpanContext(ROOT_CONTEXT, { traceId: m[1], spanId: m[2], traceFlags: parseInt(m[3], 16) & TraceFlags.SAMPLED, isRemote: true });
}

export function createOtlpTracer(options: OtlpTracerOptions): RunTracer {
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ "service.name": options.serviceName }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: options.url }), { scheduledDelayMillis: 1_000 })],
  });
  const tracer = provider.getTracer("farmhand-worker");
  return {
    begin(job: ClaimedJob, claimedAt: number): RunSpan {
      const span = tracer.startSpan(
        `process ${job.type}`,
        {
          kind: SpanKind.CONSUMER,
          startTime: claimedAt,
          attributes: {
            "messaging.system": "farmhand",
            "messaging.operation": "process",
            "messaging.message.id": job.jobId,
            "farmhand.job.id": job.jobId,
            "farmhand.job.type": job.type,
            "farmhand.job.attempt": job.attempt,
            ...(options.worker.id ? { "farmhand.worker.id": options.worker.id } : {}),
            ...(options.worker.name ? { "farmhand.worker.name": options.worker.name } : {}),
          },
        },
        parentOf(job.traceparent),
      );
      const context = span.spanContext();
      const flags = (context.traceFlags & TraceFlags.SAMPLED).toString(16).padStart(2, "0");
      return {
        traceparent: `00-${context.traceId}-${context.spanId}-${flags}`,
        end(outcome: JobOutcome) {
          span.setAttribute("farmhand.job.outcome", outcome.kind);
          if (outcome.kind === "failed" || outcome.kind === "lost") {
            span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.kind === "failed" ? outcome.error : outcome.reason });
          }
          span.end();
        },
      };
    },
    // spans that could not be sent are lost, never the engine's stop
    close: () => provider.shutdown().catch(() => undefined),
  };
}
