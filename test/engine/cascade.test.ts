// Canceling the root of a deep or wide pipeline on the loopback server, whose transactions run under Convex's limits:
// the root's cancel (a client's mutation) returns at once, and every descendant ends canceled with dependency_failed
// within a minute, one scheduled settlement page per parent (convex/pipelines/settlements.ts); with a completion webhook
// set, each of them is delivered too.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { ConvexHttpClient } from "convex/browser";
import { afterAll, beforeAll, expect, it } from "vitest";
import { api, internal } from "../../convex/_generated/api";
import type { Id } from "../../convex/_generated/dataModel";
import { startTestServer, type Seeded, type TestServer } from "../server/index";
import { sleep } from "./serverTestKit";

let server: TestServer;
let seeded: Seeded;
let http: ConvexHttpClient;

beforeAll(async () => {
  server = await startTestServer({ crons: false });
  seeded = await server.seed(0);
  http = new ConvexHttpClient(server.url, { logger: false });
});
afterAll(async () => {
  await server.close();
});

/** The jobs' statuses and codes, read straight from the server's database. */
async function ends(ids: Array<Id<"jobs">>) {
  return await server.t.run(async (ctx) => await Promise.all(ids.map(async (id) => (await ctx.db.get(id))!)));
}

/** Polls until every job of `ids` ended canceled with dependency_failed; how long that took (ms). */
async function allCanceled(ids: Array<Id<"jobs">>, within: number): Promise<number> {
  const start = Date.now();
  for (;;) {
    const jobs = await ends(ids);
    if (jobs.every((j) => j.status === "canceled" && j.errorCode === "dependency_failed")) return Date.now() - start;
    if (Date.now() - start > within) {
      const left = jobs.filter((j) => j.status !== "canceled").length;
      throw new Error(`${left} of ${ids.length} descendants still not canceled after ${within} ms`);
    }
    await sleep(250);
  }
}

it("the root of a 700-deep chain: its cancel returns, and all 700 descendants are canceled with dependency_failed within a minute", async () => {
  const clientKey = seeded.clientKey;
  const root = await server.t.mutation(api.jobs.submit, { clientKey, type: "demo.echo" });
  const chain: Array<Id<"jobs">> = [];
  let parent = root;
  for (let i = 0; i < 700; i++) chain.push((parent = await server.t.mutation(api.jobs.submit, { clientKey, type: "demo.echo", dependsOn: { jobs: [parent] } })));
  expect(await http.mutation(api.jobs.cancel, { clientKey, jobId: root })).toEqual({ status: "canceled" });
  const took = await allCanceled(chain, 60_000);
  expect(took).toBeLessThan(60_000);
  const jobs = await ends(chain);
  expect(jobs.map((j) => j.failedParent)).toEqual([root, ...chain.slice(0, -1)]);
  expect(await server.t.run(async (ctx) => await ctx.db.query("settlements").collect())).toEqual([]);
}, 180_000);

it("the root of a 60 × 10 tree with a completion webhook: all 660 descendants canceled within a minute, every end delivered", async () => {
  const posts: string[] = [];
  const receiver = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
    req.on("end", () => {
      posts.push(body);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  try {
    const { key: clientKey } = await server.write(async (t) => await t.mutation(internal.admin.createClientKey, { orgId: seeded.orgId, name: "hooked" }));
    await http.mutation(api.jobs.setWebhook, { clientKey, url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook` });
    const root = await server.t.mutation(api.jobs.submit, { clientKey, type: "demo.echo" });
    const children = await server.t.mutation(api.jobs.submitBatch, { clientKey, jobs: Array.from({ length: 60 }, () => ({ type: "demo.echo", dependsOn: { jobs: [root] } })) });
    const descendants: Array<Id<"jobs">> = [...children];
    for (const child of children) {
      descendants.push(...(await server.t.mutation(api.jobs.submitBatch, { clientKey, jobs: Array.from({ length: 10 }, () => ({ type: "demo.echo", dependsOn: { jobs: [child] } })) })));
    }
    expect(await http.mutation(api.jobs.cancel, { clientKey, jobId: root })).toEqual({ status: "canceled" });
    expect(await allCanceled(descendants, 60_000)).toBeLessThan(60_000);
    // the root's end and each descendant's: one delivery each
    const start = Date.now();
    while (posts.length < 661 && Date.now() - start < 120_000) await sleep(250);
    const delivered = new Set(posts.map((body) => (JSON.parse(body) as { jobId: string }).jobId));
    expect(delivered).toEqual(new Set([root, ...descendants]));
  } finally {
    receiver.closeAllConnections();
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
  }
}, 300_000);
