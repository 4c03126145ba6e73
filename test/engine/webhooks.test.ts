// Completion webhooks against a real local HTTP receiver, through the loopback server: the delivery is signed
// as docs/API.md says, a 500 is retried until a 200, and a receiver that never answers is timed out without
// holding up other deliveries or the server's call queue.
import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { ConvexHttpClient } from "convex/browser";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { api, internal } from "../../convex/_generated/api";
import type { Doc, Id } from "../../convex/_generated/dataModel";
import { startTestServer, type Seeded, type TestServer } from "../server/index";
import { waitFor } from "./serverTestKit";

const TIMEOUT_MS = 1_000;
const RETRY_BASE_MS = 200;

type Received = { at: number; body: string; signature: string };
type Receiver = { url: string; received: Received[]; answer: (n: number) => number | "hang"; close(): Promise<void> };

/** A receiver answering its n-th request (0-based) with `answer(n)`; "hang" never answers. */
async function startReceiver(answer: (n: number) => number | "hang"): Promise<Receiver> {
  const received: Received[] = [];
  const hanging: ServerResponse[] = [];
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
    req.on("end", () => {
      const n = received.length;
      received.push({ at: Date.now(), body, signature: String(req.headers["farmhand-signature"] ?? "") });
      const status = receiver.answer(n);
      if (status === "hang") hanging.push(res);
      else res.writeHead(status).end("ok");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const receiver: Receiver = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    received,
    answer,
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of hanging) res.destroy();
        server.close(() => resolve());
      }),
  };
  return receiver;
}

/** What a receiver does with the header (docs/API.md "Verifying a webhook"): recompute and compare. */
function verify(secret: string, body: string, header: string): boolean {
  const parts = Object.fromEntries(header.split(",").map((p) => p.split("=") as [string, string]));
  const expected = createHmac("sha256", secret).update(`${parts.t}.${body}`).digest("hex");
  return parts.v1 !== undefined && parts.v1.length === expected.length && timingSafeEqual(Buffer.from(parts.v1), Buffer.from(expected));
}

let server: TestServer;
let seeded: Seeded;
let http: ConvexHttpClient;
const receivers: Receiver[] = [];
const savedEnv = { ...process.env };

beforeAll(async () => {
  process.env.FARMHAND_WEBHOOK_TIMEOUT_MS = String(TIMEOUT_MS);
  process.env.FARMHAND_WEBHOOK_RETRY_BASE_MS = String(RETRY_BASE_MS);
  server = await startTestServer({ crons: false });
  seeded = await server.seed(1);
  http = new ConvexHttpClient(server.url, { logger: false });
});
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});
afterAll(async () => {
  await server.close();
  process.env = savedEnv;
});

/** A fresh client key with a webhook to this receiver: its key and the signing secret. */
async function hookedKey(receiver: Receiver) {
  const { key } = await server.write(async (t) => await t.mutation(internal.admin.createClientKey, { orgId: seeded.orgId, name: "hooked" }));
  const { secret } = await http.mutation(api.jobs.setWebhook, { clientKey: key, url: receiver.url });
  return { clientKey: key, secret: secret! };
}

/** Submit a job with this key and run it to success on the seeded worker. */
async function runJob(clientKey: string, spec: { externalId?: string; batchId?: string } = {}): Promise<Id<"jobs">> {
  const jobId = await http.mutation(api.jobs.submit, { clientKey, type: "demo.echo", payload: { hi: 1 }, ...spec });
  const apiKey = seeded.workerKeys[0];
  const claimed = await http.mutation(api.workers.claim, { apiKey, capabilities: ["demo.echo"], max: 4 });
  const mine = claimed.find((c) => c.jobId === jobId)!;
  await http.mutation(api.workers.complete, { apiKey, leaseId: mine.leaseId, result: { echoed: true } });
  return jobId;
}

async function delivery(jobId: Id<"jobs">): Promise<Doc<"webhookDeliveries"> | null> {
  return await server.t.run(async (ctx) => await ctx.db.query("webhookDeliveries").withIndex("by_job", (q) => q.eq("jobId", jobId)).unique());
}

/** waitFor for an async read. */
async function waitForAsync(read: () => Promise<true | undefined>, what: string, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  while ((await read()) === undefined) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

it("a finished job's webhook arrives signed, with the job's fields", async () => {
  const receiver = await startReceiver(() => 200);
  receivers.push(receiver);
  const { clientKey, secret } = await hookedKey(receiver);
  const jobId = await runJob(clientKey, { externalId: "order-17", batchId: "nightly" });
  await waitFor(() => (receiver.received.length > 0 ? true : undefined), "the delivery");
  const [got] = receiver.received;
  expect(verify(secret, got.body, got.signature)).toBe(true);
  expect(verify("fh_h_someone-else", got.body, got.signature)).toBe(false);
  const t = Number(/^t=(\d+),v1=[0-9a-f]{64}$/.exec(got.signature)![1]);
  expect(Math.abs(t - Date.now() / 1000)).toBeLessThan(60);
  const body = JSON.parse(got.body) as Record<string, unknown>;
  expect(body).toMatchObject({ jobId, type: "demo.echo", status: "succeeded", result: { echoed: true }, externalId: "order-17", batchId: "nightly" });
  expect(typeof body.finishedAt).toBe("number");
  const row = await settledAsync(jobId, "delivered");
  expect(row.attempts).toEqual([expect.objectContaining({ status: 200, jobStatus: "succeeded" })]);
});

it("a 500 is retried with backoff until the receiver answers 200", async () => {
  const receiver = await startReceiver((n) => (n === 0 ? 500 : 200));
  receivers.push(receiver);
  const { clientKey, secret } = await hookedKey(receiver);
  const jobId = await runJob(clientKey);
  const row = await settledAsync(jobId, "delivered");
  expect(row.attempts.map((a) => a.status)).toEqual([500, 200]);
  expect(receiver.received).toHaveLength(2);
  const gap = receiver.received[1].at - receiver.received[0].at;
  expect(gap).toBeGreaterThanOrEqual(RETRY_BASE_MS / 2 - 20); // the first retry waits 50–100 % of the base
  for (const got of receiver.received) expect(verify(secret, got.body, got.signature)).toBe(true);
});

it("a hanging receiver is timed out and retried; meanwhile other deliveries and calls go on", async () => {
  const hanging = await startReceiver((n) => (n === 0 ? "hang" : 200));
  const quick = await startReceiver(() => 200);
  receivers.push(hanging, quick);
  const slowKey = await hookedKey(hanging);
  const quickKey = await hookedKey(quick);
  const slowJob = await runJob(slowKey.clientKey);
  await waitFor(() => (hanging.received.length > 0 ? true : undefined), "the hanging request");
  // while that request hangs, another job's webhook is delivered and the server answers calls
  const startedAt = Date.now();
  const quickJob = await runJob(quickKey.clientKey);
  await settledAsync(quickJob, "delivered");
  expect(Date.now() - startedAt).toBeLessThan(TIMEOUT_MS);
  expect((await delivery(slowJob))!.state).toBe("sending");
  const row = await settledAsync(slowJob, "delivered");
  expect(row.attempts[0]).toMatchObject({ error: `no answer within ${TIMEOUT_MS} ms` });
  expect(row.attempts[0].ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
  expect(row.attempts[1]).toMatchObject({ status: 200 });
});

async function settledAsync(jobId: Id<"jobs">, state: Doc<"webhookDeliveries">["state"], timeoutMs = 15_000) {
  let row: Doc<"webhookDeliveries"> | null = null;
  await waitForAsync(async () => {
    row = await delivery(jobId);
    return row?.state === state ? true : undefined;
  }, `delivery ${state}`, timeoutMs);
  return row!;
}

