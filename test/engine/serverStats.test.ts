// The loopback server's instruments, seen from real clients: subscriptions re-run only when a committed write
// falls into their read set, identical subscriptions share one run, and GET /__testserver/stats counts calls
// and pushes per function (scheduled functions and HTTP routes included).
import { ConvexHttpClient } from "convex/browser";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { fixtureConvexDir, startTestServer, statsPath, statsResetPath, type FixtureSchema, type TestServer } from "../server/index";
import { api } from "../server/fixture/convex/_generated/api";
import { Clients, statsOf, untypedRef, waitFor, watch } from "./serverTestKit";


describe("loopback server stats and targeted subscriptions", () => {
  let server: TestServer<FixtureSchema>;
  const clients = new Clients(() => server);
  const stats = (path: string) => statsOf(server, path);

  beforeAll(async () => {
    server = await startTestServer<FixtureSchema>({ convexDir: fixtureConvexDir, crons: false });
  });
  afterEach(async () => {
    await clients.closeAll();
  });
  afterAll(async () => {
    await server.close();
  });

  it("re-runs only the subscriptions a write falls into, and pushes only results that changed", async () => {
    const reader = clients.make();
    const writer = clients.make();
    const touched = watch<number[]>(reader, api.items.inGroup, { group: "target-a" });
    const untouched = watch<number[]>(reader, api.items.inGroup, { group: "target-b" });
    await waitFor(touched.latest, "first result");
    await waitFor(untouched.latest, "first result");
    server.resetStats();

    const id = await writer.mutation(api.items.add, { group: "target-a", rank: 1 });
    await waitFor(() => (touched.latest()?.length === 1 ? true : undefined), "the write");
    expect(stats("items:inGroup")).toEqual({ calls: 1, conflicts: 0, pushes: 1 });
    expect(stats("items:add")).toEqual({ calls: 1, conflicts: 0, pushes: 0 });
    expect(server.stats().pushes).toBe(1);
    expect(untouched.updates()).toBe(1);

    // Inside the read set but the answer stays the same: re-run, not pushed.
    await writer.mutation(api.items.setRank, { id, rank: 1 });
    expect(stats("items:inGroup")).toEqual({ calls: 2, conflicts: 0, pushes: 1 });
    expect(touched.updates()).toBe(2);
  });

  it("identical (query, arguments) from two clients share one run; each first result is a push", async () => {
    server.resetStats();
    const first = watch<number[]>(clients.make(), api.items.inGroup, { group: "shared" });
    await waitFor(first.latest, "the first subscriber's result");
    const second = watch<number[]>(clients.make(), api.items.inGroup, { group: "shared" });
    await waitFor(second.latest, "the second subscriber's result");
    expect(stats("items:inGroup")).toEqual({ calls: 1, conflicts: 0, pushes: 2 });

    await clients.make().mutation(api.items.add, { group: "shared", rank: 3 });
    await waitFor(() => (first.latest()?.length && second.latest()?.length ? true : undefined), "both updates");
    expect(stats("items:inGroup")).toEqual({ calls: 2, conflicts: 0, pushes: 4 });
    expect(server.stats().pushes).toBe(4);
  });

  it("a subscription nobody holds any more is not re-run", async () => {
    const reader = clients.make();
    const gone = watch<number[]>(reader, api.items.inGroup, { group: "dropped" });
    await waitFor(gone.latest, "first result");
    gone.stop();
    // The unsubscription reaches the server before this client's next call.
    await reader.mutation(api.items.add, { group: "elsewhere", rank: 0 });
    server.resetStats();
    await clients.make().mutation(api.items.add, { group: "dropped", rank: 1 });
    expect(stats("items:inGroup").calls).toBe(0);
  });

  it("writes of scheduled functions reach subscribers; scheduled functions count under their own names", async () => {
    const made = clients.make();
    const list = watch<number[]>(made, api.items.inGroup, { group: "later" });
    await waitFor(list.latest, "first result");
    server.resetStats();
    await made.mutation(api.items.addLater, { group: "later", rank: 4, delayMs: 50 });
    expect(list.latest()).toEqual([]);
    await waitFor(() => (list.latest()?.length ? true : undefined), "the scheduled write");
    expect(list.latest()).toEqual([4]);
    expect(stats("items:addLater").calls).toBe(1);
    expect(stats("items:addScheduled").calls).toBe(1);
    expect(stats("items:inGroup")).toEqual({ calls: 1, conflicts: 0, pushes: 1 });
  });

  it("counts HTTP routes as http:<METHOD> <declared path or prefix>, and the functions they call under their own names", async () => {
    server.resetStats();
    const posted = await fetch(`${server.url}/messages`, { method: "POST", body: JSON.stringify({ author: "web", body: "hi" }) });
    expect(posted.status).toBe(201);
    const listed = await fetch(`${server.url}/items/no%20such%20group`);
    expect(await listed.json()).toEqual([]);
    expect((await fetch(`${server.url}/no-such-route`)).status).toBe(404);
    await new ConvexHttpClient(server.url, { logger: false }).query(api.items.inGroup, { group: "over the client endpoint" });
    expect(server.stats().functions).toEqual({
      "http:GET /items/": { calls: 1, conflicts: 0, pushes: 0 },
      "http:POST /messages": { calls: 1, conflicts: 0, pushes: 0 },
      "items:inGroup": { calls: 2, conflicts: 0, pushes: 0 },
      "messages:send": { calls: 1, conflicts: 0, pushes: 0 },
    });
  });

  it("counts a call refused for bad arguments, but not a call of a function that does not exist", async () => {
    server.resetStats();
    const made = clients.make();
    await expect(made.mutation(untypedRef<"mutation">("items:add"), { group: 1 })).rejects.toThrow();
    await expect(made.mutation(untypedRef<"mutation">("items:nope"), {})).rejects.toThrow(/Could not find public function/);
    expect(server.stats().functions).toEqual({ "items:add": { calls: 1, conflicts: 0, pushes: 0 } });
  });

  it("answers GET /__testserver/stats; POST /__testserver/stats/reset zeroes it and answers the zeroed stats", async () => {
    await clients.make().mutation(api.items.add, { group: "endpoint", rank: 1 });
    const answered = await fetch(`${server.url}${statsPath}`);
    expect(answered.status).toBe(200);
    const body = (await answered.json()) as { functions: Record<string, unknown>; pushes: number; conflictWindowMs: number };
    expect(body).toEqual(server.stats());
    const added = body.functions["items:add"] as { calls: number; conflicts: number; pushes: number };
    expect(added.calls).toBeGreaterThan(0);
    expect(added.conflicts).toBeTypeOf("number");
    expect(added.pushes).toBe(0);
    expect(body.conflictWindowMs).toBe(20);

    const reset = await fetch(`${server.url}${statsResetPath}`, { method: "POST" });
    expect(reset.status).toBe(200);
    const zeroed = { functions: {}, pushes: 0, conflictWindowMs: 20 };
    expect(await reset.json()).toEqual(zeroed);
    expect(await (await fetch(`${server.url}${statsPath}`)).json()).toEqual(zeroed);
    const wrongMethod = await fetch(`${server.url}${statsPath}`, { method: "POST" });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get("allow")).toBe("GET");
    expect((await fetch(`${server.url}${statsResetPath}`)).status).toBe(405);
  });

  it("answers the stats while refusing connections", async () => {
    const outage = server.dropConnections(300);
    expect((await fetch(`${server.url}${statsPath}`)).status).toBe(200);
    expect((await fetch(`${server.url}/messages`, { method: "POST", body: "{}" })).status).toBe(503);
    await outage;
  });
});
