// The instruments underneath the loopback server, driven through convex-test directly: what each commit
// wrote (old and new versions, read back without touching the function's limits), what a query read, and
// how executions nest.
import type { FunctionReference } from "convex/server";
import { convexTest, type TestConvex } from "convex-test";
import { beforeAll, describe, expect, it } from "vitest";
import { fixtureConvexDir, modulesFromDirectory, schemaFromDirectory, type FixtureSchema } from "../server/index";
import { api } from "../server/fixture/convex/_generated/api";
import type { Id } from "../server/fixture/convex/_generated/dataModel";
import type { Commit } from "../server/instruments/conflictAudit";
import { Origin } from "../server/instruments/executions";
import { IndexCatalog } from "../server/instruments/indexCatalog";
import { instrumentModules } from "../server/instruments/instrumentModules";
import { Instruments } from "../server/instruments/instruments";
import { instrumentTestConvex } from "../server/instruments/instrumentTestConvex";
import { ensureSyscallRecorder } from "../server/instruments/syscallRecorder";
import { unknownVersion } from "../server/instruments/writes";


async function instrumented(transactionLimits: boolean | Record<string, number> = true) {
  const schema = await schemaFromDirectory(fixtureConvexDir);
  const instruments = new Instruments({ catalog: IndexCatalog.fromSchema(schema), conflictWindowMs: 20, limitsEnforced: transactionLimits !== false });
  const t = convexTest({ schema, modules: instrumentModules(modulesFromDirectory(fixtureConvexDir), instruments), transactionLimits } as never) as TestConvex<FixtureSchema>;
  ensureSyscallRecorder();
  const commits: Commit[] = [];
  instruments.onCommit((commit) => commits.push(commit));
  /** Calls a function the way the server does: on behalf of an origin. */
  const call = (kind: "query" | "mutation", ref: FunctionReference<"query" | "mutation">, args: object, origin = new Origin("session:test", 0)): Promise<unknown> =>
    instruments.within(origin, () =>
      kind === "query" ? t.query(ref as FunctionReference<"query">, args) : t.mutation(ref as FunctionReference<"mutation">, args),
    );
  return { instruments, t, tests: instrumentTestConvex(t, instruments), commits, call };
}

// vitest types its asymmetric matchers as any; as unknown they fit in typed expectations.
const anyNumber: unknown = expect.any(Number);
const containing = (fields: object): unknown => expect.objectContaining(fields);

describe("instruments on convex-test", () => {
  let setup: Awaited<ReturnType<typeof instrumented>>;
  beforeAll(async () => {
    setup = await instrumented();
  });

  it("records each commit's writes with the old and new indexed fields", async () => {
    const { call, commits } = setup;
    commits.length = 0;
    const id = (await call("mutation", api.items.add, { group: "w", rank: 1 })) as Id<"items">;
    await call("mutation", api.items.setRank, { id, rank: 5 });
    await call("mutation", api.items.remove, { id });
    expect(commits.map((commit) => commit.writes)).toEqual([
      [{ table: "items", id, before: null, after: { _id: id, _creationTime: anyNumber, group: "w", rank: 1 } }],
      [{ table: "items", id, before: containing({ rank: 1 }), after: containing({ rank: 5 }) }],
      [{ table: "items", id, before: containing({ rank: 5 }), after: null }],
    ]);
    expect(commits.map((commit) => commit.seq)).toEqual([1, 2, 3].map((n) => commits[0].seq + n - 1));
    expect(commits.every((commit) => commit.caller === "session:test")).toBe(true);
  });

  it("a query's read set is kept for its origin; a read-only mutation commits nothing", async () => {
    const { call, instruments, commits } = setup;
    const origin = new Origin("subscriptions", 0);
    await call("query", api.items.inGroup, { group: "r" }, origin);
    const reads = instruments.readsOf(origin)!;
    expect(reads.empty).toBe(false);
    const before = commits.length;
    await call("mutation", api.items.takeFromGroup, { group: "r", count: 1 });
    expect(commits.length).toBe(before);
    await call("mutation", api.items.add, { group: "r", rank: 1 });
    expect(reads.touches(commits.at(-1)!.writes[0])).toBe(true);
    await call("mutation", api.items.add, { group: "elsewhere", rank: 1 });
    expect(reads.touches(commits.at(-1)!.writes[0])).toBe(false);
  });

  it("a nested mutation that fails leaves no writes in its caller's commit", async () => {
    const { call, commits } = setup;
    const id = await call("mutation", api.items.survivesFailedNested, { group: "nested" });
    expect(commits.at(-1)!.writes.map((write) => write.id)).toEqual([id]);
    expect(setup.instruments.stats.snapshot().functions["items:addThenFail"]?.calls).toBe(1);
  });

  it("inline test code writes like a function but is not counted; direct calls are not counted either", async () => {
    const { tests, commits, instruments } = setup;
    instruments.stats.reset();
    const before = commits.length;
    await tests.run((ctx) => ctx.db.insert("items", { group: "inline", rank: 1 }));
    await tests.query(api.items.inGroup, { group: "inline" });
    expect(commits.length).toBe(before + 1);
    expect(instruments.stats.snapshot().functions).toEqual({});
  });
});

describe("read-backs within the transaction's limits", () => {
  it("skips reading back new versions when the limits left are too close, and the function still succeeds", async () => {
    const { call, commits } = await instrumented({ databaseQueries: 3 });
    const ids = await call("mutation", api.items.addMany, { group: "tight", ranks: [1, 2, 3] });
    expect(ids).toHaveLength(3);
    expect(commits.at(-1)!.writes.map((write) => write.after)).toEqual([unknownVersion, unknownVersion, unknownVersion]);
  });

  it("reads them back when limits are off", async () => {
    const { call, commits } = await instrumented(false);
    await call("mutation", api.items.addMany, { group: "loose", ranks: [1, 2, 3] });
    expect(commits.at(-1)!.writes.map((write) => (write.after as { rank: number }).rank)).toEqual([1, 2, 3]);
  });
});
