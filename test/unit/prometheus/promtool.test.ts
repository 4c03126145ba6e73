import { spawnSync } from "node:child_process";
import { expect, test } from "vitest";
import { api, internal } from "../../../convex/_generated/api";
import { enrollWorker, newFarm, refreshSummaries, TEST_TYPES } from "../../backend/setup";
import { getMetrics } from "../../backend/prometheus/scrapeText";

/**
 * Prometheus's own linter (`promtool check metrics`, Debian's prometheus package) on what GET /api/metrics answers,
 * produced by the real functions in convex-test: every family well formed (names, units, `_total` counters,
 * histogram buckets), label values escaped (a client key named with quotes, a backslash and a line break).
 */

test("promtool check metrics finds nothing wrong with a scrape", async () => {
  const farm = await newFarm();
  const { key } = await farm.t.mutation(internal.admin.createOperatorKey, { orgId: farm.orgId, name: "prometheus" });
  const odd = await farm.t.mutation(internal.admin.createClientKey, { orgId: farm.orgId, name: 'team "a" \\ b\nc' });
  const w = await enrollWorker(farm);
  for (const [clientKey, type] of [[farm.clientKey, "render"], [odd.key, "encode"], [odd.key, "render"]]) {
    await farm.t.mutation(api.jobs.submit, { clientKey, type });
    const [c] = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: TEST_TYPES });
    await farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: c.leaseId });
  }
  await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "render" });
  await refreshSummaries(farm.t);
  const { status, text } = await getMetrics(farm.t, key);
  expect(status).toBe(200);
  expect(text).toContain('client="team \\"a\\" \\\\ b\\nc"');
  const promtool = spawnSync("promtool", ["check", "metrics"], { input: text, encoding: "utf8" });
  expect(promtool.error, "promtool runs (Debian's prometheus package; .ci/ensure.mjs installs it)").toBeUndefined();
  expect({ code: promtool.status, said: `${promtool.stdout}${promtool.stderr}`.trim() }).toEqual({ code: 0, said: "" });
});
