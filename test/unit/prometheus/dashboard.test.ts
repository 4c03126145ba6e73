import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { api, internal } from "../../../convex/_generated/api";
import { enrollWorker, newFarm, refreshSummaries, TEST_TYPES } from "../../backend/setup";
import { scrapeSamples } from "../../backend/prometheus/scrapeText";

/**
 * docs/grafana/farmhand.json: a dashboard Grafana can import (a Prometheus data source chosen on import, every
 * panel on it), with the panels operators look for, and every series it queries is one GET /api/metrics exposes.
 */

type Target = { refId: string; expr: string; datasource: { type: string; uid: string } };
type Panel = { id: number; type: string; title: string; gridPos: { x: number; y: number; w: number; h: number }; datasource: { uid: string }; targets: Target[] };
type Variable = { name: string; type: string; query: unknown };
const dashboard = JSON.parse(readFileSync(join(__dirname, "../../../docs/grafana/farmhand.json"), "utf8")) as {
  title: string;
  uid: string;
  schemaVersion: number;
  panels: Panel[];
  templating: { list: Variable[] };
};

/** The series an expression selects: each metric name with its equality matchers (regex and negative ones left out). */
function seriesOf(expr: string): Array<{ name: string; labels: Record<string, string> }> {
  return [...expr.matchAll(/\b(farmhand_[a-z_]+)(\{([^}]*)\})?/g)].map(([, name, , matchers]) => ({
    name,
    labels: Object.fromEntries([...(matchers ?? "").matchAll(/([a-z_]+)\s*=\s*"([^"$]*)"/g)].map(([, k, v]) => [k, v])),
  }));
}

describe("the Grafana dashboard", () => {
  it("imports: a Prometheus data source variable every panel uses, unique panel ids, panels inside the 24-column grid and not overlapping", () => {
    expect(dashboard).toMatchObject({ title: "Farmhand", uid: "farmhand" });
    expect(dashboard.schemaVersion).toBeGreaterThanOrEqual(36);
    const source = dashboard.templating.list.find((v) => v.type === "datasource");
    expect(source).toMatchObject({ name: "datasource", query: "prometheus" });
    const ids = dashboard.panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const p of dashboard.panels) {
      expect([p.title, p.datasource.uid]).toEqual([p.title, "${datasource}"]);
      expect(p.targets.length, p.title).toBeGreaterThan(0);
      for (const t of p.targets) expect([p.title, t.datasource.uid, typeof t.expr]).toEqual([p.title, "${datasource}", "string"]);
      expect(p.gridPos.x + p.gridPos.w, p.title).toBeLessThanOrEqual(24);
    }
    const cells = new Set<string>();
    for (const p of dashboard.panels) {
      for (let x = p.gridPos.x; x < p.gridPos.x + p.gridPos.w; x++) {
        for (let y = p.gridPos.y; y < p.gridPos.y + p.gridPos.h; y++) {
          expect(cells.has(`${x},${y}`), `${p.title} overlaps at ${x},${y}`).toBe(false);
          cells.add(`${x},${y}`);
        }
      }
    }
  });

  it("shows queue depth and oldest age by type, wait p50/p95, throughput, failures, workers by state and the share per client key", () => {
    const exprOf = (title: RegExp) => dashboard.panels.filter((p) => title.test(p.title)).flatMap((p) => p.targets.map((t) => t.expr)).join("\n");
    expect(exprOf(/^Queue depth by type$/)).toMatch(/sum by \(type\) \(farmhand_jobs\{status="pending"/);
    expect(exprOf(/^Oldest ready job by type$/)).toContain("farmhand_queue_oldest_ready_age_seconds");
    expect(exprOf(/^Queue wait p50 \/ p95$/)).toMatch(/histogram_quantile\(0\.5,[\s\S]*histogram_quantile\(0\.95,/);
    expect(exprOf(/^Throughput$/)).toContain("farmhand_jobs_finished_total");
    expect(exprOf(/^Failures$/)).toMatch(/outcome="dead"[\s\S]*farmhand_retries_total/);
    expect(exprOf(/^Workers by state$/)).toContain("sum by (state) (farmhand_workers)");
    expect(exprOf(/^Share per client key/)).toContain("sum by (client)");
  });

  it("queries only series a scrape of a working farm has", async () => {
    const farm = await newFarm();
    const { key } = await farm.t.mutation(internal.admin.createOperatorKey, { orgId: farm.orgId, name: "prometheus" });
    const w = await enrollWorker(farm);
    // a job done, one dead, one running and one pending: every status and outcome the panels name
    for (const fails of [false, true]) {
      await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "render", maxAttempts: 1 });
      const [c] = await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: TEST_TYPES });
      if (fails) await farm.t.mutation(api.workers.fail, { apiKey: w.apiKey, leaseId: c.leaseId, error: "boom", retryable: false });
      else await farm.t.mutation(api.workers.complete, { apiKey: w.apiKey, leaseId: c.leaseId });
    }
    await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "render" });
    await farm.t.mutation(api.workers.claim, { apiKey: w.apiKey, capabilities: TEST_TYPES });
    await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "render" });
    await refreshSummaries(farm.t);
    const samples = await scrapeSamples(farm.t, key);
    const queried = dashboard.panels.flatMap((p) => p.targets.flatMap((t) => seriesOf(t.expr).map((s) => ({ panel: p.title, ...s }))));
    expect(queried.length).toBeGreaterThan(20);
    const missing = queried.filter((q) => !samples.some((s) => s.name === q.name && Object.entries(q.labels).every(([k, v]) => s.labels[k] === v)));
    expect(missing).toEqual([]);
  });
});
