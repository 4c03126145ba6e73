import { execFile } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { makeFunctionReference, type FunctionReference } from "convex/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Id } from "../../convex/_generated/dataModel";
import { parseRecipes } from "../../extension/handlers";
import { buildModule, FD_WRITE } from "../unit/apps/wasmBuilder";
import { engineWorker, jobsOf, startFarm, stopFarm, submit, waitForJobs, type Farm } from "./helpers";

/**
 * Every example in README.md and the guides in docs/ runs here against the loopback server: each `curl` through the real
 * curl, each `npx convex run` as that function call, the recipe settings through the recipe parser, the job view's
 * shape against a real job view. A worker runs the jobs the examples submit, so a `demo.*` payload its handler
 * refuses (docs/API.md once sent demo.primes `{"limit": …}`; it wants `n`) fails here too.
 */

const run = promisify(execFile);
const ROOT = join(__dirname, "..", "..");
/** README.md, then every guide in docs/ (the API reference among them), each read in full. */
const DOCS = ["README.md", ...readdirSync(join(ROOT, "docs")).filter((name) => name.endsWith(".md")).sort().map((name) => `docs/${name}`)];

/** Commands the examples show that start programs rather than call the farm: each is tested where it lives. */
const NOT_RUN_HERE: Record<string, string> = {
  "npm start": "the demo (test/demo)",
  "npm test": "the whole suite",
  "npx convex dev": "needs a Convex account",
  "npx convex deploy": "needs a Convex account",
  "npm run build": "the build",
  "node dist/cli.js": "the CLI (test/engine/cli.test.ts, test/unit/cli)",
  "FARMHAND_KEY=": "the CLI (test/engine/cli.test.ts, test/unit/cli)",
  "farmhand ": "the farmhand command (test/engine/pipelines.test.ts, test/engine/scheduleCli.test.ts)",
  "npm pack": "the npm package (test/engine/sdkPackage.test.ts)",
  "npm install ./farmhand-": "the npm package (test/engine/sdkPackage.test.ts)",
  "npx farmhand": "the npm package (test/engine/sdkPackage.test.ts)",
};

type Block = { doc: string; line: number; lang: string; text: string };

function blocksOf(doc: string): Block[] {
  const lines = readFileSync(join(ROOT, doc), "utf8").split("\n");
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\w*)\s*$/.exec(lines[i]);
    if (!open) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i]); i++) body.push(lines[i]);
    blocks.push({ doc, line: start + 1, lang: open[1], text: body.join("\n") });
  }
  return blocks;
}

/** A shell block's commands: continuation lines joined, comments and `# →` answers dropped. */
function commandsOf(text: string): string[] {
  return text
    .replace(/\\\n\s*/g, "")
    .split("\n")
    .map((l) => l.replace(/\s+#\s.*$/, "").trim())
    .filter((l) => l && !l.startsWith("#"));
}

type State = { jobIds: string[]; lastJobId?: string };

describe("the examples in README.md and docs/*.md", () => {
  let farm: Farm;
  const state: State = { jobIds: [] };
  const blocks = DOCS.flatMap(blocksOf);

  beforeAll(async () => {
    farm = await startFarm(1, 4);
    await engineWorker(farm, 0, { concurrency: 4 }).start();
    // a first job warms the worker's process pool, so the examples' waits answer when their jobs end
    await waitForJobs(farm, await submit(farm, [{ type: "demo.echo", payload: { warm: true } }]));
    // the app the README's app example runs
    const publish = await fetch(`${farm.server.url}/api/apps/render?memoryMB=128&timeoutMs=600000`, {
      method: "POST",
      headers: { authorization: `Bearer ${farm.seeded.publishKey}`, "content-type": "application/wasm" },
      body: buildModule({ imports: [FD_WRITE] }),
    });
    expect(publish.status).toBe(200);
  });
  afterAll(async () => {
    await stopFarm(farm);
  });

  /** The example's placeholders, filled in with this farm's values. */
  function fill(command: string): string {
    return command
      .replaceAll("https://<deployment>.convex.site", farm.server.url)
      .replaceAll("https://<deployment>.convex.cloud", farm.server.url)
      .replaceAll("fh_c_…", farm.seeded.clientKey)
      .replaceAll("<jobId>", state.lastJobId ?? "no-job-yet")
      .replaceAll("<orgId>", farm.seeded.orgId)
      .replaceAll('"k57…"', JSON.stringify(farm.seeded.orgId))
      .replaceAll('"orgId": "…"', `"orgId": ${JSON.stringify(farm.seeded.orgId)}`);
  }

  function remember(answer: unknown) {
    const found = answer as { jobId?: unknown; jobIds?: unknown } | string | null;
    const ids = typeof found === "string" ? [found] : [];
    if (found && typeof found === "object") {
      if (typeof found.jobId === "string") ids.push(found.jobId);
      if (Array.isArray(found.jobIds)) ids.push(...found.jobIds.filter((id): id is string => typeof id === "string"));
    }
    for (const id of ids) if (!state.jobIds.includes(id)) state.jobIds.push(id);
    if (ids.length) state.lastJobId = ids[ids.length - 1];
  }

  async function curl(command: string, where: string) {
    const { stdout } = await run("bash", ["-c", command.replace(/^curl /, "curl -sS -w '\\n%{http_code}' ")], {
      env: { ...process.env, FARMHAND_CLIENT_KEY: farm.seeded.clientKey, FARMHAND_OPERATOR_KEY: farm.seeded.operatorKey },
      timeout: 70_000,
    });
    const lines = stdout.trimEnd().split("\n");
    const status = Number(lines.pop());
    const body = lines.join("\n");
    expect(status, `${where}: ${command}\n→ ${status} ${body}`).toBeGreaterThanOrEqual(200);
    expect(status, `${where}: ${command}\n→ ${status} ${body}`).toBeLessThan(300);
    // the metrics answer Prometheus's text format; every other route JSON
    if (/\/api\/metrics\b/.test(command)) expect(body, `${where}: ${command}`).toContain("# TYPE farmhand_jobs gauge");
    else remember(JSON.parse(body));
  }

  async function convexRun(command: string, where: string) {
    const match = /^npx convex run ([a-zA-Z]+):([a-zA-Z]+)(?: '(.*)')?$/.exec(command);
    expect(match, `${where}: cannot read ${command}`).not.toBeNull();
    const [, module, name, argsText] = match!;
    const args = JSON.parse(argsText ?? "{}") as Record<string, unknown>;
    const exported = ((await import(join(ROOT, "convex", `${module}.ts`))) as Record<string, { isQuery?: boolean; isMutation?: boolean }>)[name];
    expect(exported, `${where}: no function ${module}:${name}`).toBeDefined();
    const ref = makeFunctionReference(`${module}:${name}`) as FunctionReference<"mutation" | "query", "public" | "internal">;
    type Call = (ref: FunctionReference<"mutation" | "query", "public" | "internal">, args: Record<string, unknown>) => Promise<unknown>;
    const answer = await farm.server.write((t) => (exported.isQuery ? (t.query as Call) : (t.mutation as Call))(ref, args));
    if (`${module}:${name}` === "jobs:submit") remember(answer);
  }

  it("runs every shell example, in order, each answering success", async () => {
    let ran = 0;
    const skipped = new Set<string>();
    for (const block of blocks.filter((b) => b.lang === "sh")) {
      for (const raw of commandsOf(block.text)) {
        const where = `${block.doc}:${block.line}`;
        const command = fill(raw);
        if (command.startsWith("curl ")) await curl(command, where);
        else if (command.startsWith("npx convex run ")) await convexRun(command, where);
        else {
          const reason = Object.keys(NOT_RUN_HERE).find((prefix) => raw.startsWith(prefix));
          expect(reason, `${where}: an example this test does not know how to run: ${raw}`).toBeDefined();
          skipped.add(reason!);
          continue;
        }
        ran++;
      }
    }
    expect(ran).toBeGreaterThanOrEqual(15);
    expect([...skipped].sort()).toEqual(Object.keys(NOT_RUN_HERE).sort());

    // the jobs they submitted ran; every demo.* job went through its handler and succeeded
    const ids = state.jobIds as Array<Id<"jobs">>;
    const rows = await jobsOf(farm, ids);
    const demo = rows.filter((r) => r.type.startsWith("demo."));
    expect(demo.length).toBeGreaterThanOrEqual(2);
    const finished = await waitForJobs(farm, demo.map((r) => r._id), 60_000);
    for (const row of finished) expect(row, `${row.type} ${JSON.stringify(row.payload)}: ${row.error ?? ""}`).toMatchObject({ status: "succeeded" });
  });

  it("the recipe settings example is a valid farmhand.recipes value", () => {
    const json = blocks.filter((b) => b.lang === "json" && b.text.includes('"farmhand.recipes"'));
    expect(json).toHaveLength(1);
    const value = JSON.parse(`{${json[0].text}}`) as Record<string, unknown>;
    expect(parseRecipes(value["farmhand.recipes"]).map((r) => r.name)).toEqual(["wordcount"]);
  });

  it("the job view's documented fields are what jobs:get answers", async () => {
    const shape = blocks.find((b) => b.lang === "ts" && b.text.includes("outputTruncated"));
    expect(shape).toBeDefined();
    const documented = [...shape!.text.replace(/\/\/.*$/gm, "").matchAll(/\b([a-zA-Z]+)\??(?=[,\s}]|$)/g)].map((m) => m[1]);
    const [jobId] = state.jobIds.length ? state.jobIds : [""];
    const res = await fetch(`${farm.server.url}/api/jobs/${jobId}`, { headers: { authorization: `Bearer ${farm.seeded.clientKey}` } });
    const view = (await res.json()) as Record<string, unknown>;
    const optional = new Set(["requirements", "progress", "statusText", "result", "error", "suspendedSince", "externalId", "batchId", "startedAt", "finishedAt", "app"]);
    for (const field of ["errorCode", "failedParent", "dependsOn", "unmetParents"]) optional.add(field);
    // Fields the shape marks with `?` (such as a replicated job's per-instance `outputs`) may be absent.
    for (const m of shape!.text.replace(/\/\/.*$/gm, "").matchAll(/\b([a-zA-Z]+)\?(?=[,:\s}]|$)/g)) optional.add(m[1]);
    for (const field of documented) {
      if (!optional.has(field)) expect(view, `documented field ${field}`).toHaveProperty(field);
    }
    for (const field of Object.keys(view)) expect(documented, `undocumented field ${field}`).toContain(field);
  });
});
