// Traces from submit to result: `farmhand submit` run with TRACEPARENT in its environment submits the job with it;
// a `farmhand-worker` with OTEL_EXPORTER_OTLP_ENDPOINT exports one span for the run (claim → run → complete) to an
// OTLP/HTTP receiver (a tiny HTTP server here), a child of the submitter's span; the job's recipe process gets the
// run's own context as TRACEPARENT.
import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { Id } from "../../convex/_generated/dataModel";
import { runFarmhand, spawnCli, waitForLine } from "./cliProcess";
import { startFarm, stopFarm, waitForJobs, type Farm } from "./helpers";

const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT_ID = "00f067aa0ba902b7";

type OtlpValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean };
type OtlpSpan = { traceId: string; spanId: string; parentSpanId?: string; name: string; kind: number; attributes: Array<{ key: string; value: OtlpValue }> };

/** A tiny OTLP/HTTP (JSON) traces receiver: every span posted to /v1/traces. */
async function otlpReceiver(): Promise<{ server: Server; url: string; spans: OtlpSpan[]; paths: string[] }> {
  const spans: OtlpSpan[] = [];
  const paths: string[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8").on("data", (chunk: string) => (body += chunk));
    req.on("end", () => {
      paths.push(`${req.method} ${req.url} ${req.headers["content-type"]}`);
      const sent = JSON.parse(body) as { resourceSpans: Array<{ scopeSpans: Array<{ spans: OtlpSpan[] }> }> };
      for (const r of sent.resourceSpans) for (const s of r.scopeSpans) spans.push(...s.spans);
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, spans, paths };
}

const attr = (span: OtlpSpan, key: string) => {
  const v = span.attributes.find((a) => a.key === key)?.value;
  return v?.stringValue ?? (v?.intValue !== undefined ? Number(v.intValue) : v?.boolValue);
};

let farm: Farm;
let receiver: Awaited<ReturnType<typeof otlpReceiver>>;

beforeAll(async () => {
  farm = await startFarm(1);
  receiver = await otlpReceiver();
});
afterAll(async () => {
  receiver.server.close();
  await stopFarm(farm);
});

it("a job submitted under a trace is run as a child span of it, exported over OTLP/HTTP; its recipe gets the run's traceparent", async () => {
  const dir = mkdtempSync(join(tmpdir(), "farmhand-traces-"));
  writeFileSync(join(dir, "tp.js"), 'console.log(JSON.stringify({ traceparent: process.env.TRACEPARENT ?? null }));');
  writeFileSync(join(dir, "recipes.json"), JSON.stringify({ tp: { command: process.execPath, args: [join(dir, "tp.js")] } }));
  const submitted = await runFarmhand(["submit", "--type", "recipe.tp", "--payload", "{}"], {
    FARMHAND_URL: farm.server.url,
    FARMHAND_CLIENT_KEY: farm.seeded.clientKey,
    TRACEPARENT: `00-${TRACE_ID}-${PARENT_ID}-01`,
  });
  expect(submitted.code).toBe(0);
  const jobId = submitted.out[0] as Id<"jobs">;
  const cli = spawnCli(["--url", farm.server.url, "--recipes", join(dir, "recipes.json")], {
    FARMHAND_KEY: farm.seeded.workerKeys[0],
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_SERVICE_NAME: "farm-test",
  });
  try {
    await waitForLine(cli, /traces: a span per run to/);
    // a recipe's runner starts at the lowest priority: on a busy machine that takes its time
    const [job] = await waitForJobs(farm, [jobId], 150_000);
    expect(job.status).toBe("succeeded");
    const deadline = Date.now() + 20_000;
    while (receiver.spans.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(receiver.paths[0]).toMatch(/^POST \/v1\/traces application\/json/);
    const [span] = receiver.spans;
    expect(receiver.spans).toHaveLength(1);
    expect(span).toMatchObject({ traceId: TRACE_ID, parentSpanId: PARENT_ID, name: "process recipe.tp", kind: 5 /* CONSUMER */ });
    expect(attr(span, "messaging.system")).toBe("farmhand");
    expect(attr(span, "messaging.operation")).toBe("process");
    expect(attr(span, "farmhand.job.id")).toBe(jobId);
    expect(attr(span, "farmhand.job.type")).toBe("recipe.tp");
    expect(attr(span, "farmhand.job.attempt")).toBe(1);
    expect(attr(span, "farmhand.worker.name")).toBe("test-worker-1");
    expect(attr(span, "farmhand.job.outcome")).toBe("succeeded");
    // the recipe's own work is a child of the run: its TRACEPARENT names the run's span
    expect(job.result).toEqual({ traceparent: `00-${TRACE_ID}-${span.spanId}-01` });
  } finally {
    cli.child.kill("SIGTERM");
    await cli.exited;
  }
}, 200_000);
