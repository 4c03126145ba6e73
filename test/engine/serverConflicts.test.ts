// The conflict audit on the fixture app with real clients: pairs of mutations that must count a would-be
// OCC conflict and pairs that must not. The window is wide here so that a slow machine cannot push a
// conflicting pair apart; one test narrows it.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { fixtureConvexDir, startTestServer, type FixtureSchema, type TestServer } from "../server/index";
import { api } from "../server/fixture/convex/_generated/api";
import { Clients, sleep, statsOf, waitFor, watch } from "./serverTestKit";


describe("conflict audit with real clients", () => {
  let server: TestServer<FixtureSchema>;
  const clients = new Clients(() => server);
  const stats = (path: string) => statsOf(server, path);
  /**
   * Two clients whose sockets are up. A client whose first Transition comes after A's write has seen it by the
   * audit's rule; these hold one subscription no write touches, so they get no other Transition until they
   * call (a one-shot query would not do: its unsubscription may reach the server after A's write).
   */
  const pair = async () => {
    const made = [clients.make(), clients.make()];
    const ready = made.map((client) => watch<string>(client, api.dir.nested.hello));
    await waitFor(() => (ready.every((subscription) => subscription.latest()) ? true : undefined), "both clients' first Transition");
    return made;
  };

  beforeAll(async () => {
    server = await startTestServer<FixtureSchema>({ convexDir: fixtureConvexDir, crons: false, conflictWindowMs: 5_000 });
  });
  afterEach(async () => {
    await clients.closeAll();
  });
  afterAll(async () => {
    await server.close();
  });

  it("B reads a range A has just written into, before B's client could have seen it: one would-be conflict", async () => {
    const [a, b] = await pair();
    await a.mutation(api.items.add, { group: "pair", rank: 1 });
    server.resetStats();
    expect(await b.mutation(api.items.takeFromGroup, { group: "pair", count: 5 })).toEqual([1]);
    expect(stats("items:takeFromGroup")).toEqual({ calls: 1, conflicts: 1, pushes: 0 });
    expect(server.stats().conflictWindowMs).toBe(5_000);
  });

  it("no conflict when A's write falls outside the range B reads", async () => {
    const [a, b] = await pair();
    await a.mutation(api.items.add, { group: "left", rank: 1 });
    server.resetStats();
    await b.mutation(api.items.takeFromGroup, { group: "right", count: 5 });
    expect(stats("items:takeFromGroup")).toEqual({ calls: 1, conflicts: 0, pushes: 0 });
  });

  it("no conflict once B's client has been sent A's write (B reacts to a push)", async () => {
    const [a, b] = await pair();
    const seen = watch<number[]>(b, api.items.inGroup, { group: "pushed" });
    await waitFor(seen.latest, "first result");
    await a.mutation(api.items.add, { group: "pushed", rank: 1 });
    await waitFor(() => (seen.latest()?.length ? true : undefined), "the push");
    server.resetStats();
    await b.mutation(api.items.takeFromGroup, { group: "pushed", count: 5 });
    expect(stats("items:takeFromGroup").conflicts).toBe(0);
  });

  it("no conflict with the same client's own earlier, awaited writes", async () => {
    const a = clients.make();
    await a.mutation(api.items.add, { group: "mine", rank: 1 });
    await a.mutation(api.items.add, { group: "mine", rank: 2 });
    server.resetStats();
    await a.mutation(api.items.takeFromGroup, { group: "mine", count: 5 });
    expect(stats("items:takeFromGroup").conflicts).toBe(0);
  });

  it("no conflict with the same client's earlier mutation even when not awaited: one client's mutations run in order", async () => {
    const [a] = await pair();
    server.resetStats();
    const [, taken] = await Promise.all([
      a.mutation(api.items.add, { group: "in order", rank: 1 }),
      a.mutation(api.items.takeFromGroup, { group: "in order", count: 5 }),
    ]);
    expect(taken).toEqual([1]);
    expect(stats("items:takeFromGroup")).toEqual({ calls: 1, conflicts: 0, pushes: 0 });
  });

  it(".take(k) covers the range up to the last document returned: a write behind it does not conflict, one in front does", async () => {
    const [a, b] = await pair();
    for (const rank of [1, 2, 3]) await b.mutation(api.items.add, { group: "heads", rank });
    await a.mutation(api.items.add, { group: "heads", rank: 9 });
    server.resetStats();
    expect(await b.mutation(api.items.takeFromGroup, { group: "heads", count: 1 })).toEqual([1]);
    expect(stats("items:takeFromGroup").conflicts).toBe(0);

    await a.mutation(api.items.add, { group: "heads", rank: 0 });
    expect(await b.mutation(api.items.takeFromGroup, { group: "heads", count: 1 })).toEqual([0]);
    expect(stats("items:takeFromGroup").conflicts).toBe(1);
  });

  it("a point read conflicts with a write to that document only", async () => {
    const [a, b] = await pair();
    const read = await b.mutation(api.items.add, { group: "points", rank: 1 });
    const other = await b.mutation(api.items.add, { group: "points", rank: 2 });
    await a.mutation(api.items.setRank, { id: other, rank: 20 });
    server.resetStats();
    expect(await b.mutation(api.items.readById, { id: read })).toBe(1);
    expect(stats("items:readById").conflicts).toBe(0);

    await a.mutation(api.items.setRank, { id: read, rank: 10 });
    expect(await b.mutation(api.items.readById, { id: read })).toBe(10);
    expect(stats("items:readById").conflicts).toBe(1);
  });

  it("a scheduled function's write counts against a mutation whose client had not seen it", async () => {
    const [a, b] = await pair();
    await a.mutation(api.items.addLater, { group: "scheduled", rank: 1, delayMs: 0 });
    await waitFor(
      () => server.t.run(async (ctx) => (await ctx.db.query("items").collect()).some((item) => item.group === "scheduled") || undefined),
      "the scheduled insert",
    );
    server.resetStats();
    await b.mutation(api.items.takeFromGroup, { group: "scheduled", count: 5 });
    expect(stats("items:takeFromGroup").conflicts).toBe(1);
  });

  it("reads of a query the mutation calls (ctx.runQuery) are the mutation's reads", async () => {
    const [a, b] = await pair();
    await a.mutation(api.items.add, { group: "nested", rank: 1 });
    server.resetStats();
    expect(await b.mutation(api.items.countViaQuery, { group: "nested" })).toBe(1);
    expect(stats("items:countViaQuery")).toEqual({ calls: 1, conflicts: 1, pushes: 0 });
    expect(stats("items:ranksInternal").calls).toBe(1);
  });
});

describe("the conflict window", () => {
  it("a write committed longer ago than the window does not count", async () => {
    const server = await startTestServer<FixtureSchema>({ convexDir: fixtureConvexDir, crons: false, conflictWindowMs: 1 });
    const clients = new Clients(() => server);
    try {
      const [a, b] = [clients.make(), clients.make()];
      const ready = watch<string>(b, api.dir.nested.hello);
      await waitFor(ready.latest, "B's first Transition");
      await a.mutation(api.items.add, { group: "stale", rank: 1 });
      await sleep(30);
      server.resetStats();
      await b.mutation(api.items.takeFromGroup, { group: "stale", count: 5 });
      expect(statsOf(server, "items:takeFromGroup")).toEqual({ calls: 1, conflicts: 0, pushes: 0 });
      expect(server.stats().conflictWindowMs).toBe(1);
    } finally {
      await clients.closeAll();
      await server.close();
    }
  });

  it("refuses a window that is not a number of ms ≥ 0", async () => {
    await expect(startTestServer<FixtureSchema>({ convexDir: fixtureConvexDir, crons: false, conflictWindowMs: -1 })).rejects.toThrow("conflictWindowMs needs a number of ms ≥ 0, got -1");
    await expect(startTestServer<FixtureSchema>({ convexDir: fixtureConvexDir, crons: false, conflictWindowMs: Number.NaN })).rejects.toThrow(/conflictWindowMs/);
  });
});
