import * as assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "mocha";
import * as vscode from "vscode";
import { activateFarmhand, donateNow, type FarmhandApi, joinTestFarm, setFarmhandSetting, waitUntil } from "./farmhand";
import { getJob, submitJob } from "./farmClient";

// farmhand.otlpEndpoint: the extension exports a span per job run to an OTLP/HTTP collector (a tiny one here), a
// child of the trace the job was submitted in, with the OpenTelemetry SDK from its own bundle (dist/tracing.js).
const TRACE_ID = "0af7651916cd43dd8448eb211c80319c";
const PARENT_ID = "b7ad6b7169203331";
const DONATE_NOW = donateNow("full");

type Span = { traceId: string; parentSpanId?: string; name: string; attributes: Array<{ key: string; value: { stringValue?: string } }> };

describe("traces from the extension's engine", function () {
  this.timeout(120_000);
  let api: FarmhandApi;
  let collector: Server;
  const spans: Span[] = [];

  before(async () => {
    collector = createServer((req, res) => {
      let body = "";
      req.setEncoding("utf8").on("data", (chunk: string) => (body += chunk));
      req.on("end", () => {
        const sent = JSON.parse(body) as { resourceSpans: Array<{ scopeSpans: Array<{ spans: Span[] }> }> };
        for (const r of sent.resourceSpans) for (const s of r.scopeSpans) spans.push(...s.spans);
        res.writeHead(200, { "content-type": "application/json" }).end("{}");
      });
    });
    await new Promise<void>((resolve) => collector.listen(0, "127.0.0.1", resolve));
    api = await activateFarmhand();
    await joinTestFarm(api);
    if (api.getState().wanted) await vscode.commands.executeCommand("farmhand.toggle");
    await setFarmhandSetting("otlpEndpoint", `http://127.0.0.1:${(collector.address() as AddressInfo).port}`);
    for (const [key, value] of Object.entries(DONATE_NOW)) await setFarmhandSetting(key, value);
  });

  after(async () => {
    if (api.getState().wanted) await vscode.commands.executeCommand("farmhand.toggle");
    for (const key of Object.keys(DONATE_NOW)) await setFarmhandSetting(key, undefined);
    await setFarmhandSetting("otlpEndpoint", undefined);
    collector.close();
  });

  it("with farmhand.otlpEndpoint set, a traced job's run is exported as a child span of the submitter's", async () => {
    await vscode.commands.executeCommand("farmhand.toggle");
    const jobId = await submitJob("demo.echo", { traced: true }, { traceparent: `00-${TRACE_ID}-${PARENT_ID}-01` });
    const job = await waitUntil("the traced job finished", () => getJob(jobId), (j) => j.status === "succeeded" || j.status === "dead", 90_000);
    assert.equal(job.status, "succeeded", job.error);
    const span = await waitUntil("its span at the collector", () => spans.find((s) => s.traceId === TRACE_ID), (s) => s !== undefined, 20_000);
    assert.equal(span!.parentSpanId, PARENT_ID);
    assert.equal(span!.name, "process demo.echo");
    assert.equal(span!.attributes.find((a) => a.key === "farmhand.job.id")?.value.stringValue, jobId);
    assert.equal(span!.attributes.find((a) => a.key === "messaging.system")?.value.stringValue, "farmhand");
  });
});
