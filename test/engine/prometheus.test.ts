// A real Prometheus (Debian's prometheus package; .ci/ensure.mjs installs it) scrapes the loopback server's
// GET /api/metrics every second with the scrape config of docs/metrics.md (the seed's operator key from a file),
// while a farmhand-worker runs 50 jobs;
// its HTTP API then answers sum(farmhand_jobs_finished_total) = 50, a queue-wait p95, and every query of the
// Grafana dashboard (docs/grafana/farmhand.json) as valid PromQL.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { spawnCli, waitForLine, type CliRun } from "./cliProcess";
import { startFarm, stopFarm, submit, waitForJobs, type Farm } from "./helpers";

type QueryAnswer = { status: string; error?: string; data?: { resultType: string; result: Array<{ metric: Record<string, string>; value: [number, string] }> } };

let farm: Farm;
let dir: string;
let prometheus: ChildProcess | undefined;
let promUrl: string;
let cli: CliRun | undefined;

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function query(promql: string): Promise<QueryAnswer> {
  const res = await fetch(`${promUrl}/api/v1/query?query=${encodeURIComponent(promql)}`);
  return (await res.json()) as QueryAnswer;
}

async function until<T>(what: string, timeoutMs: number, check: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = await check().catch(() => undefined);
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

beforeAll(async () => {
  farm = await startFarm(1);
  dir = mkdtempSync(join(tmpdir(), "farmhand-prometheus-"));
  writeFileSync(join(dir, "operator-key"), farm.seeded.operatorKey, { mode: 0o600 });
  // the scrape config docs/metrics.md tells operators to use, pointed at this farm, every second
  const documented = /```yaml\n([\s\S]*?)```/.exec(readFileSync(join(__dirname, "../../docs/metrics.md"), "utf8"))![1];
  const config = documented
    .replace("scheme: https", "scheme: http")
    .replace("<deployment>.convex.site", new URL(farm.server.url).host)
    .replace("/etc/prometheus/farmhand-operator-key", join(dir, "operator-key"))
    .replace(/scrape_interval: \d+s/, "scrape_interval: 1s");
  expect(config).not.toBe(documented);
  writeFileSync(join(dir, "prometheus.yml"), `global:\n  evaluation_interval: 1s\n${config}`);
  const port = await freePort();
  promUrl = `http://127.0.0.1:${port}`;
  prometheus = spawn(
    "prometheus",
    [`--config.file=${join(dir, "prometheus.yml")}`, `--storage.tsdb.path=${join(dir, "data")}`, `--web.listen-address=127.0.0.1:${port}`, "--log.level=warn"],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  let stderr = "";
  prometheus.stderr!.setEncoding("utf8").on("data", (t: string) => (stderr += t));
  await until(`prometheus ready (${stderr})`, 60_000, async () => ((await fetch(`${promUrl}/-/ready`)).ok ? true : undefined));
}, 90_000);

afterAll(async () => {
  if (cli) {
    cli.child.kill("SIGTERM");
    await cli.exited;
  }
  if (prometheus) {
    prometheus.kill("SIGTERM");
    await new Promise((r) => prometheus!.once("exit", r));
  }
  await stopFarm(farm);
  rmSync(dir, { recursive: true, force: true });
});

it("Prometheus scrapes the farm while 50 jobs run: sum(farmhand_jobs_finished_total) = 50, a queue-wait p95, the dashboard's queries", async () => {
  const up = await until("the first scrape", 30_000, async () => {
    const answer = await query('up{job="farmhand"}');
    return answer.data?.result[0]?.value[1] === "1" ? answer : undefined;
  });
  expect(up.status).toBe("success");
  cli = spawnCli(["--url", farm.server.url, "--concurrency", "4"], { FARMHAND_KEY: farm.seeded.workerKeys[0] });
  await waitForLine(cli, /working on/, 60_000);
  const ids = await submit(farm, Array.from({ length: 50 }, (_, i) => ({ type: "demo.echo", payload: { i } })));
  const jobs = await waitForJobs(farm, ids, 240_000);
  expect(jobs.filter((j) => j.status === "succeeded")).toHaveLength(50);

  const finished = await until("sum(farmhand_jobs_finished_total) = 50", 60_000, async () => {
    const value = (await query("sum(farmhand_jobs_finished_total)")).data?.result[0]?.value[1];
    return value === "50" ? value : undefined;
  });
  expect(finished).toBe("50");
  // over the cumulative buckets, not a rate: a rate needs two scrapes in which the buckets grew, and 50 quick jobs
  // may all have waited between the same two scrapes
  const p95 = await until("a finite queue-wait p95 over the 50 jobs", 30_000, async () => {
    const answer = await query('histogram_quantile(0.95, sum by (le) (farmhand_job_wait_seconds_bucket{type="demo.echo"}))');
    const value = Number(answer.data?.result[0]?.value[1]);
    return answer.status === "success" && answer.data!.result.length === 1 && Number.isFinite(value) ? value : undefined;
  });
  expect(p95).toBeGreaterThanOrEqual(0);
  const waits = await query('sum(farmhand_job_wait_seconds_count{type="demo.echo"})');
  expect(Number(waits.data!.result[0].value[1])).toBeGreaterThanOrEqual(50); // one per claim: a job given back waits again

  // every query of the dashboard runs (Grafana's variables as "everything", its intervals as a few minutes)
  const dashboard = JSON.parse(readFileSync(join(__dirname, "../../docs/grafana/farmhand.json"), "utf8")) as { panels: Array<{ title: string; targets: Array<{ expr: string }> }> };
  for (const panel of dashboard.panels) {
    for (const { expr } of panel.targets) {
      const promql = expr.replaceAll("$__rate_interval", "1m").replaceAll("$__range", "5m").replace(/\$(type|client)\b/g, ".*");
      const answer = await query(promql);
      expect([panel.title, promql, answer.status, answer.error]).toEqual([panel.title, promql, "success", undefined]);
    }
  }
  const depth = await query('sum by (type) (farmhand_jobs{status="succeeded"})');
  expect(depth.data!.result).toEqual([expect.objectContaining({ metric: { type: "demo.echo" }, value: [expect.any(Number), "50"] })]);
}, 400_000);
