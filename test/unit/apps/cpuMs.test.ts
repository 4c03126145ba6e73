import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CHILDREN_MEASURED } from "../../../extension/handlers/cpuClock";
import { ProcessPool, type PoolRunContext } from "../../../extension/handlers/processPool";
import type { ImplSpec } from "../../../extension/handlers/protocol";
import { fakeCtx } from "../handlers/fakeCtx";

const fixtures = join(__dirname, "fixtures", "cpuJobs.ts");

describe("CPU time and checkpoints of any job kind", { timeout: 30_000 }, () => {
  const pool = new ProcessPool({ niceness: 10, maxIdle: 1 });
  afterAll(() => pool.close());

  async function run(impl: ImplSpec, payload: unknown, extra: Partial<PoolRunContext> = {}) {
    const calls: number[] = [];
    const checkpoints: string[] = [];
    const ctx: PoolRunContext = { ...fakeCtx().ctx, onCpuMs: (ms) => void calls.push(ms), onCheckpoint: (d) => void checkpoints.push(d), ...extra };
    const outcome = await pool.run(impl, payload, ctx).then(
      (value) => ({ value }),
      (error: Error) => ({ error }),
    );
    return { outcome, calls, checkpoints };
  }

  it("measures the CPU time of job code in the runner process", async () => {
    const { calls } = await run({ module: fixtures, exportName: "burns" }, { ms: 300 });
    expect(calls).toHaveLength(1);
    expect(calls[0]).toBeGreaterThanOrEqual(300);
    expect(calls[0]).toBeLessThan(3_000);
    const idle = await run({ builtin: "demo.echo" }, { delayMs: 300 });
    expect(idle.calls[0]).toBeLessThan(150);
  });

  it("counts a recipe's command where the runner can measure its children (Linux), and reports none elsewhere", async () => {
    const recipe = {
      name: "burn",
      command: process.execPath,
      args: ["-e", "const s=process.cpuUsage();while((process.cpuUsage(s).user+process.cpuUsage(s).system)<300000);console.log('{}')"],
    };
    const { outcome, calls } = await run({ builtin: "recipe", options: recipe }, null);
    expect(outcome).toEqual({ value: {} });
    if (CHILDREN_MEASURED) {
      expect(calls).toHaveLength(1);
      expect(calls[0]).toBeGreaterThanOrEqual(300);
    } else expect(calls).toEqual([]);
  });

  it("reports CPU time for failed jobs too, and none for work done elsewhere (Ollama)", async () => {
    const failed = await run({ builtin: "demo.primes" }, { n: "lots" });
    expect("error" in failed.outcome).toBe(true);
    expect(failed.calls).toHaveLength(1);
    const ollama = await run({ builtin: "ollama.generate", options: { url: "http://127.0.0.1:9" } }, { model: "m", prompt: "p" });
    expect("error" in ollama.outcome).toBe(true);
    expect(ollama.calls).toEqual([]);
  });

  it("lets job code report its own CPU time", async () => {
    const { calls } = await run({ module: fixtures, exportName: "reportsCpu" }, null);
    expect(calls).toEqual([1234]);
  });

  it("hands job code the checkpoint it resumes from and passes on the checkpoints it saves", async () => {
    const { outcome, checkpoints } = await run({ module: fixtures, exportName: "savesCheckpoints" }, null, { checkpoint: "AAEC" });
    expect(outcome).toEqual({ value: "AAEC" });
    expect(checkpoints.map((c) => Buffer.from(c, "base64").toString())).toEqual(["step 1", "step 2"]);
  });
});
