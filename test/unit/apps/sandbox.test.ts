import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { appHarness } from "./harness";
import { busyLoop, checkpoints, echoStdin, exitsWith, opensHostFile, prints, traps } from "./hostileApps";

const WASI_EBADF = "08";

describe("the app sandbox", { timeout: 30_000 }, () => {
  const h = appHarness();
  afterAll(() => h.close());

  it("hands the app its payload and checkpoint on stdin and takes the last stdout line as the result", async () => {
    const app = h.publish(echoStdin());
    const run = await h.run(app, { n: 1, text: "héllo" }, "AAEC");
    expect(run.ok && run.outcome.result).toEqual({ payload: { n: 1, text: "héllo" }, checkpoint: "AAEC" });
    expect(run.progress).toContainEqual([0, "started"]);
    // Without a checkpoint, stdin holds no "checkpoint" key at all.
    const fresh = await h.run(app, [1, 2]);
    expect(fresh.ok && fresh.outcome.result).toEqual({ payload: [1, 2] });
  });

  it("streams other stdout lines and stderr as output; a JSON line that is not the last is output too", async () => {
    const app = h.publish(prints('plain text\n{"a": 1}\n{"progress": 0.5}\n{"result": true}\n', "from stderr\n"));
    const run = await h.run(app, null);
    expect(run.ok && run.outcome.result).toEqual({ result: true });
    expect(run.output).toContain("plain text\n");
    expect(run.output).toContain('{"a": 1}\n');
    expect(run.output).toContain("from stderr\n");
    expect(run.output).not.toContain("result");
    expect(run.progress).toContainEqual([0.5, undefined]);
  });

  it("gives a module that opens a host file through fd 3 an error code, never the file", async () => {
    const dir = mkdtempSync(join(tmpdir(), "farmhand-secret-"));
    const secret = join(dir, "secret.txt");
    writeFileSync(secret, "TOP-SECRET-CONTENT");
    try {
      const run = await h.run(h.publish(opensHostFile(secret)), null);
      expect(run.ok ? run.outcome.result : run.error.message).toEqual({ errno: WASI_EBADF });
      expect(run.output).not.toContain("TOP-SECRET");
      // Nor through the standard streams' descriptors.
      for (const fd of [0, 1, 2]) {
        const viaStdio = await h.run(h.publish(opensHostFile(secret, fd)), null);
        expect(viaStdio.ok && viaStdio.outcome.result).not.toEqual({ errno: "00" });
        expect(viaStdio.ok && (viaStdio.outcome.result as { errno: string }).errno).toMatch(/^\d\d$/);
        expect(viaStdio.output).not.toContain("TOP-SECRET");
      }
      expect(readFileSync(secret, "utf8")).toBe("TOP-SECRET-CONTENT");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  // Time limits, cancel and the memory limit: hostileSuite.test.ts (the runner is discarded with its thread).

  it("fails a trap with the last stderr lines", async () => {
    const run = await h.run(h.publish(traps()), null);
    expect(run.ok).toBe(false);
    if (run.ok) return;
    expect(run.error.message).toMatch(/trapped \(RuntimeError: unreachable\)/);
    expect(run.error.message).toContain("stderr: about to trap | last words");
  });

  it("fails a non-zero exit with its code and the last stderr lines", async () => {
    const run = await h.run(h.publish(exitsWith(3)), null);
    expect(run.ok).toBe(false);
    if (run.ok) return;
    expect(run.error.message).toContain("exited with code 3");
    expect(run.error.message).toContain("stderr: failing on purpose");
    expect(run.error.retryable).toBe(true);
  });

  it("fails an app that prints no JSON result, not retryable", async () => {
    const run = await h.run(h.publish(prints("hello, not json\n", "some stderr\n")), null);
    expect(run.ok).toBe(false);
    if (run.ok) return;
    expect(run.error.message).toContain('must print its result as JSON on its last line of output; it printed "hello, not json"');
    expect(run.error.message).toContain("stderr: some stderr");
    expect(run.error.retryable).toBe(false);
  });

  it("keeps checkpoints up to 512 KiB and fails a bigger one clearly", async () => {
    const fits = await h.run(h.publish(checkpoints(512 * 1024)), null);
    expect(fits.ok && fits.outcome.result).toEqual({ done: true });
    expect(fits.checkpoints).toHaveLength(1);
    expect(Buffer.from(fits.checkpoints[0], "base64").length).toBe(512 * 1024);
    expect(fits.ok && fits.outcome.checkpoint).toBe(fits.checkpoints[0]);

    const tooBig = await h.run(h.publish(checkpoints(512 * 1024 + 3)), null);
    expect(tooBig.ok).toBe(false);
    if (tooBig.ok) return;
    expect(tooBig.error.message).toContain("checkpoint too big");
    expect(tooBig.error.retryable).toBe(false);
    expect(tooBig.checkpoints).toHaveLength(0);
  });

  it("reports the CPU time of a run, failed or not", async () => {
    // 5·10^8 loop iterations take at least 0.1 s of CPU on any machine of today (≥ 1 cycle each at ≤ 5 GHz).
    const busy = await h.run(h.publish(busyLoop(500_000_000)), null);
    expect(busy.ok && busy.outcome.result).toEqual({ done: true });
    expect(busy.ok && busy.outcome.cpuMs).toBeGreaterThanOrEqual(100);
    expect(busy.cpuMs).toBe(busy.ok && busy.outcome.cpuMs);
    const failed = await h.run(h.publish(traps()), null);
    expect(failed.ok).toBe(false);
    expect(typeof failed.cpuMs).toBe("number");
  });

  it("refuses a download that does not match the pinned sha256, not retryable, before running anything", async () => {
    const honest = h.publish(prints('{"x": 1}\n'));
    const tampered = prints('{"evil": 1}\n');
    // The source answers other bytes for the pinned hash.
    const lying = { ...h.publish(tampered), sha256: honest.sha256.replace(/^./, (c) => (c === "0" ? "1" : "0")) };
    const { AppRunner } = await import("../../../extension/handlers/apps/appRunner");
    const runner = new AppRunner(h.pool, h.cache, () => Promise.resolve(tampered));
    const { fakeCtx } = await import("../handlers/fakeCtx");
    const f = fakeCtx();
    await expect(runner.run({ app: lying, payload: null }, f.ctx)).rejects.toMatchObject({
      message: expect.stringContaining(`not the pinned ${lying.sha256}`) as unknown,
      retryable: false,
    });
    expect(f.output()).toBe("");
  });

  it("refuses a module that imports anything but WASI functions, or is no WASI command", async () => {
    const { buildModule } = await import("./wasmBuilder");
    const foreign = await h.run(h.publish(buildModule({ imports: [{ module: "env", name: "host_call", params: [], results: [] }] })), null);
    expect(!foreign.ok && foreign.error.message).toContain('imports "env.host_call"; an app may import only wasi_snapshot_preview1 functions');
    expect(!foreign.ok && foreign.error.retryable).toBe(false);
    const unknownWasi = await h.run(h.publish(buildModule({ imports: [{ name: "sock_connect", params: [], results: [] }] })), null);
    expect(!unknownWasi.ok && unknownWasi.error.message).toContain("could not run: the module could not be instantiated");
    expect(!unknownWasi.ok && unknownWasi.error.retryable).toBe(false);
    const noStart = await h.run(h.publish(buildModule({ exportStart: false })), null);
    expect(!noStart.ok && noStart.error.message).toContain("exports no _start function");
  });
});
