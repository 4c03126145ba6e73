// The console's overview subscription, held by an operator through the loopback server: a running job's
// progress and output never re-run it (they do not touch what it reads); a job that finishes does, once the
// summary row is refreshed.
import { ConvexClient, ConvexHttpClient } from "convex/browser";
import { afterAll, beforeAll, expect, it } from "vitest";
import { api, internal } from "../../convex/_generated/api";
import { startTestServer, type Seeded, type TestServer } from "../server/index";
import { sleep, waitFor } from "./serverTestKit";

let server: TestServer;
let seeded: Seeded;
let operatorKey: string;
const clients: ConvexClient[] = [];

beforeAll(async () => {
  server = await startTestServer({ crons: false });
  seeded = await server.seed(1);
  operatorKey = await server.write(async (t) => {
    const { token } = await t.mutation(internal.admin.createEnrollment, { orgId: seeded.orgId, capabilities: [], canManage: true });
    return (await t.mutation(api.workers.enroll, { token, name: "operator", machineId: "op", capabilities: [] })).apiKey;
  });
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await server.close();
});

it("progress and output of a running job never re-run the overview", async () => {
  const http = new ConvexHttpClient(server.url, { logger: false });
  const jobId = await http.mutation(api.jobs.submit, { clientKey: seeded.clientKey, type: "demo.echo" });
  const apiKey = seeded.workerKeys[0];
  const [claim] = await http.mutation(api.workers.claim, { apiKey, capabilities: ["demo.echo"] });
  expect(claim.jobId).toBe(jobId);
  const client = new ConvexClient(server.url, { logger: false, skipConvexDeploymentUrlCheck: true, unsavedChangesWarning: false });
  clients.push(client);
  let latest: { counts: { running: number; succeeded: number } } | undefined;
  client.onUpdate(api.console.overview, { apiKey: operatorKey }, (value) => (latest = value));
  // the summary refresh the claim asked for has run (the overview counts the job running), and no other is due
  const refreshDue = () => server.t.run(async (ctx) => (await ctx.db.query("summaryStates").first())?.scheduledAt !== undefined);
  const giveUpAt = Date.now() + 30_000;
  while (latest?.counts.running !== 1 || (await refreshDue())) {
    if (Date.now() > giveUpAt) throw new Error(`the summary did not settle with the job running: ${JSON.stringify(latest?.counts)}`);
    await sleep(20);
  }
  server.resetStats();
  for (let i = 1; i <= 10; i++) {
    await http.mutation(api.workers.heartbeat, { apiKey, leaseId: claim.leaseId, progress: i / 10, status: `step ${i}` });
    await http.mutation(api.workers.output, { apiKey, leaseId: claim.leaseId, chunk: `line ${i}\n` });
  }
  await sleep(200);
  expect(server.stats().functions["console:overview"]?.calls ?? 0).toBe(0);
  await http.mutation(api.workers.complete, { apiKey, leaseId: claim.leaseId, result: 1 });
  await waitFor(() => (latest?.counts.succeeded === 1 ? true : undefined), "the finished job in the overview", 15_000);
});
