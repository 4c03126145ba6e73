// The npm package as a user gets it: `npm pack` at the repository root, the tarball installed into a fresh Node
// project in a temp folder (its one dependency from the npm cache when it is there), and used there against the
// loopback server: from TypeScript compiled against the installed declarations, from plain JavaScript, and through
// the farmhand CLI on the project's PATH. Nothing of the repository's own node_modules is visible to that project.
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { engineWorker, startFarm, stopFarm, submit, waitForJobs, type Farm } from "./helpers";

const run = promisify(execFile);
const ROOT = join(__dirname, "..", "..");
const TSC = join(ROOT, "node_modules", "typescript", "bin", "tsc");
/** Packing builds every bundle and the declarations: on a busy 2-core machine that takes a minute or more. */
const SLOW = 300_000;
/** How long a consumer may take to start, submit and see its demo.echo job end on a busy machine. */
const JOB_MS = 120_000;

/** What the tarball holds: the SDK (both builds and its types), the CLI and what it starts beside it, the documents. */
const PACKED = [
  "CHANGELOG.md",
  "LICENSE",
  "README.md",
  "dist/appThread.js",
  "dist/cli.js",
  "dist/farmhand.js",
  "dist/handlerRunner.js",
  "dist/sdk/client.browser.mjs",
  "dist/sdk/client.d.mts",
  "dist/sdk/client.mjs",
  "dist/tracing.js",
  "package.json",
];

/** The environment of a program run in the fresh project: npm's own variables from this run left out. */
function projectEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.toLowerCase().startsWith("npm_")));
  return { ...env, ...extra };
}

// Both consumers submit a demo.echo job, wait for it through the SDK, and print what they read as one JSON line.
const TYPESCRIPT_CONSUMER = `import { FarmhandClient, JobFailedError, type JobId, type JobSpec, type JobView } from "farmhand/client";

declare const process: { env: Record<string, string | undefined> };

const client = new FarmhandClient({ url: process.env.FARMHAND_URL!, clientKey: process.env.FARMHAND_CLIENT_KEY!, log: false });
const spec: JobSpec = { type: "demo.echo", payload: { from: "typescript" }, priority: 5 };
const jobId: JobId = await client.submit(spec);
const result: unknown = await client.result(jobId, { timeoutMs: ${JOB_MS} });
const view: JobView | null = await client.get(jobId);
const status: "pending" | "running" | "succeeded" | "canceled" | "dead" | "waiting" | undefined = view?.status;
console.log(JSON.stringify({ jobId, result, status, failure: new JobFailedError({ jobId, status: "dead", code: "dead", message: "m" }).code }));
await client.close();

// The declarations are the server's own types, not \`any\`: each line below must be refused.
// @ts-expect-error a job's type is a string
void client.submit({ type: 42 });
// @ts-expect-error jobs:submit takes no such field
void client.submit({ type: "demo.echo", colour: "red" });
// @ts-expect-error a job view has no such field
void view?.colour;
`;

const JAVASCRIPT_CONSUMER = `import { FarmhandClient } from "farmhand/client";

const client = new FarmhandClient({ url: process.env.FARMHAND_URL, clientKey: process.env.FARMHAND_CLIENT_KEY, log: false });
const jobId = await client.submit({ type: "demo.echo", payload: { from: "javascript" } });
const result = await client.result(jobId, { timeoutMs: ${JOB_MS} });
console.log(JSON.stringify({ jobId, result, status: (await client.get(jobId))?.status }));
await client.close();
`;

/** How Node runs it (the package's "node" condition, and the declarations beside it)… */
const TSCONFIG = {
  compilerOptions: { strict: true, module: "nodenext", moduleResolution: "nodenext", target: "es2022", lib: ["es2022", "dom"], types: [], outDir: "out", skipLibCheck: false },
  files: ["consumer.ts"],
};
/** …and how a bundler reads it (the "types" condition, then the browser build). */
const TSCONFIG_BUNDLER = {
  compilerOptions: { ...TSCONFIG.compilerOptions, module: "esnext", moduleResolution: "bundler", noEmit: true, outDir: undefined },
  files: ["consumer.ts"],
};

describe("the npm package: packed, installed into a fresh project, used from TypeScript, JavaScript and npx", () => {
  let farm: Farm;
  let work: string;
  let project: string;
  let tarball: string;
  let packed: string[];
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    farm = await startFarm(1);
    await engineWorker(farm, 0).start();
    // a first job warms the worker's process pool, so the consumers' jobs end in job time, not start-up time
    await waitForJobs(farm, await submit(farm, [{ type: "demo.echo", payload: { warm: true } }]), JOB_MS);
    work = mkdtempSync(join(tmpdir(), "farmhand-package-"));
    const pack = await run("npm", ["pack", "--json", "--pack-destination", work], { cwd: ROOT, env: projectEnv(), maxBuffer: 16 * 1024 * 1024 });
    const [{ filename, files }] = JSON.parse(pack.stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
    tarball = join(work, filename);
    packed = files.map((f) => f.path).sort();
    project = join(work, "project");
    mkdirSync(project);
    writeFileSync(join(project, "package.json"), JSON.stringify({ name: "farmhand-consumer", private: true, type: "module" }, null, 2));
    env = projectEnv({ FARMHAND_URL: farm.server.url, FARMHAND_CLIENT_KEY: farm.seeded.clientKey, HOME: work, XDG_CONFIG_HOME: join(work, "config") });
  }, SLOW);

  afterAll(async () => {
    await stopFarm(farm);
    rmSync(work, { recursive: true, force: true });
  });

  it("the tarball holds the SDK with its declarations and the CLI with its runners, nothing else", () => {
    expect(tarball).toMatch(/farmhand-\d+\.\d+\.\d+\.tgz$/);
    expect(packed).toEqual(PACKED);
  });

  it("installs into a fresh project with its one runtime dependency; farmhand and farmhand-worker are on its PATH", { timeout: SLOW }, async () => {
    await run("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", tarball], { cwd: project, env });
    expect(readdirSync(join(project, "node_modules")).filter((name) => !name.startsWith(".")).sort()).toEqual(["croner", "farmhand"]);
    // `--no`: the project's own bin or nothing (never a package of that name from the registry)
    const help = await run("npx", ["--no", "--", "farmhand", "--help"], { cwd: project, env });
    expect(help.stdout).toContain("Usage: farmhand <command> [options]");
    const workerHelp = await run("npx", ["--no", "--", "farmhand-worker", "--help"], { cwd: project, env });
    expect(workerHelp.stdout).toMatch(/^Usage: farmhand-worker --url/);
    // farmhand-worker loads its tracer from beside it when OTEL_EXPORTER_OTLP_ENDPOINT is set: it loads with the
    // project's packages alone (OpenTelemetry bundled in it)
    const bundle = join(project, "node_modules", "farmhand", "dist", "tracing.js");
    const tracer = await run(process.execPath, ["-e", `console.log(typeof require(${JSON.stringify(bundle)}).createOtlpTracer)`], { cwd: project, env });
    expect(tracer.stdout.trim()).toBe("function");
  });

  it("TypeScript: compiles against the installed declarations alone (wrong fields refused), then submits and reads a result", { timeout: SLOW }, async () => {
    writeFileSync(join(project, "consumer.ts"), TYPESCRIPT_CONSUMER);
    writeFileSync(join(project, "tsconfig.json"), JSON.stringify(TSCONFIG, null, 2));
    writeFileSync(join(project, "tsconfig.bundler.json"), JSON.stringify(TSCONFIG_BUNDLER, null, 2));
    for (const config of ["tsconfig.bundler.json", "tsconfig.json"]) {
      const compiled = await run(process.execPath, [TSC, "-p", join(project, config)], { cwd: project, env }).catch((e: Error & { stdout?: string }) => ({ stdout: e.stdout || e.message }));
      expect(compiled.stdout, config).toBe("");
    }
    const { stdout } = await run(process.execPath, [join(project, "out", "consumer.js")], { cwd: project, env, timeout: JOB_MS });
    expect(JSON.parse(stdout)).toMatchObject({ result: { from: "typescript" }, status: "succeeded", failure: "dead" });
  });

  it("plain JavaScript (.mjs): submits and reads a result", { timeout: SLOW }, async () => {
    writeFileSync(join(project, "consumer.mjs"), JAVASCRIPT_CONSUMER);
    const { stdout } = await run(process.execPath, [join(project, "consumer.mjs")], { cwd: project, env, timeout: JOB_MS });
    expect(JSON.parse(stdout)).toMatchObject({ result: { from: "javascript" }, status: "succeeded" });
  });

  it("npx farmhand submit --wait: submits and prints the job's end", { timeout: SLOW }, async () => {
    const { stdout } = await run("npx", ["--no", "--", "farmhand", "submit", "--type", "demo.echo", "--payload", '{"from":"npx"}', "--wait"], { cwd: project, env, timeout: JOB_MS });
    const ends = stdout.trim().split("\n").map((line) => JSON.parse(line) as { jobId: unknown; status: string; result: unknown });
    expect(ends).toHaveLength(1);
    expect(ends[0]).toMatchObject({ status: "succeeded", result: { from: "npx" } });
    expect(ends[0].jobId).toMatch(/^[a-z0-9]+$/);
  });
});
