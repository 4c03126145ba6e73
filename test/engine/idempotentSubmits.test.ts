import { afterEach, expect, it } from "vitest";
import { api } from "../../convex/_generated/api";
import { connect, startFarm, stopFarm, type Farm } from "./helpers";

let farm: Farm | undefined;
afterEach(async () => {
  if (farm) await stopFarm(farm);
  farm = undefined;
});

async function jobsNamed(f: Farm, externalId: string) {
  return await f.server.t.run(async (ctx) => (await ctx.db.query("jobs").collect()).filter((job) => job.externalId === externalId));
}

it("10 clients submitting one externalId at once make exactly one job, and all hear its id", async () => {
  farm = await startFarm(0);
  const f = farm;
  const clients = Array.from({ length: 10 }, () => connect(f));
  const ids = await Promise.all(
    clients.map((client) => client.mutation(api.jobs.submit, { clientKey: f.seeded.clientKey, type: "demo.echo", payload: { n: 1 }, externalId: "sweep-7" })),
  );
  expect(new Set(ids).size).toBe(1);
  const rows = await jobsNamed(f, "sweep-7");
  expect(rows.map((job) => job._id)).toEqual([ids[0]]);
  // the loopback server runs one transaction at a time; on a deployment the later submits read the externalId's
  // index range the first one wrote, so OCC retries them and the retry finds the job: the audit sees that read set
  expect(f.server.stats().functions["jobs:submit"].conflicts).toBeGreaterThan(0);
});

it("10 clients racing one externalId with two specs: one job, and every other spec is refused idempotency_mismatch", async () => {
  farm = await startFarm(0);
  const f = farm;
  const clients = Array.from({ length: 10 }, () => connect(f));
  const outcomes = await Promise.allSettled(
    clients.map((client, i) => client.mutation(api.jobs.submit, { clientKey: f.seeded.clientKey, type: "demo.echo", payload: { n: i % 2 }, externalId: "race" })),
  );
  const rows = await jobsNamed(f, "race");
  expect(rows).toHaveLength(1);
  const winner = rows[0]._id;
  for (const outcome of outcomes) {
    if (outcome.status === "fulfilled") expect(outcome.value).toBe(winner);
    else expect((outcome.reason as { data?: { code?: string } }).data?.code).toBe("idempotency_mismatch");
  }
  expect(outcomes.filter((o) => o.status === "rejected")).toHaveLength(5);
});
