import type { ConvexClient } from "convex/browser";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { api } from "../../convex/_generated/api";
import type { RunTracer } from "../worker/tracing";
import type { OtlpTracerOptions } from "./otlpTracer";

/**
 * Load the OpenTelemetry tracer (otlpTracer.ts) only when traces are configured: it is a bundle of its own
 * (dist/tracing.js, beside the extension's and the CLI's), so a donor who traces nothing never loads it, and the
 * extension's bundle does not grow with it. From source (tests, development) the TypeScript module is imported.
 */
async function loadOtlpTracer(options: OtlpTracerOptions): Promise<RunTracer> {
  // The package is CommonJS: the bundle, tsx and vitest all provide __dirname.
  const bundled = join(__dirname, "tracing.js");
  const source = join(__dirname, "otlpTracer.ts");
  const module = (await import(pathToFileURL(existsSync(bundled) ? bundled : source).href)) as typeof import("./otlpTracer");
  return module.createOtlpTracer(options);
}

/**
 * The OTLP/HTTP traces endpoint the OpenTelemetry environment variables name: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as
 * it is, else OTEL_EXPORTER_OTLP_ENDPOINT with /v1/traces; undefined when neither is set (no traces).
 */
export function tracesEndpoint(env: NodeJS.ProcessEnv): string | undefined {
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  if (traces) return traces;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  return base ? `${base.replace(/\/+$/, "")}/v1/traces` : undefined;
}

/** How long the key's probe may take before the spans go without the worker's name (the farm may be unreachable yet). */
const IDENTITY_WAIT_MS = 3_000;

/** The tracer of a worker's runs: who the worker is (its key's probe, for the spans' attributes), then the SDK. */
export async function workerTracer(options: { url: string; serviceName: string; client: ConvexClient; apiKey: string }): Promise<RunTracer> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const gaveUp = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), IDENTITY_WAIT_MS)));
  const probe = options.client.query(api.workers.checkKey, { apiKey: options.apiKey }).catch(() => null);
  const me = await Promise.race([probe, gaveUp]).finally(() => clearTimeout(timer));
  return await loadOtlpTracer({ url: options.url, serviceName: options.serviceName, worker: me ? { id: me.workerId, name: me.name } : {} });
}
