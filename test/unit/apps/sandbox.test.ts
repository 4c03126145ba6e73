import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { appHarness } from "./harness";
import { busyLoop, checkpoints, echoStdin, endlessLoop, exitsWith, memoryBomb, opensHostFile, prints, traps } from "./hostileApps";

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

  it("ends an endless loop at the app's time limit, not retryable, and the process stays warm", async () => {
    const pidsBefore = h.pool.pids;
    const run = await h.run(h.publish(endlessLoop(), { timeoutMs: 300 }), null);
    expect(run.ok).toBe(false);
    if (run.ok) return;
    expect(run.error.message).toContain("ran past its time limit of 300 ms");
    expect(run.error.retryable).toBe(false);
    expect(h.pool.pids).toEqual(pidsBefore.length ? pidsBefore : h.pool.pids);
    // The same process runs the next app.
    const next = await h.run(h.publish(prints('{"fine": 1}\n')), null);
    expect(next.ok && next.outcome.result).toEqual({ fine: 1 });
  });

  it("ends an endless loop at once on cancel", async () => {
    const app = h.publish(endlessLoop(), { timeoutMs: 60_000 });
    const { fakeCtx } = await import("../handlers/fakeCtx");
    const f = fakeCtx();
    const running = h.runner.run({ app, payload: null }, f.ctx);
    setTimeout(() => f.controller.abort(new Error("canceled by submitter")), 200);
    await expect(running).rejects.toThrow("canceled by submitter");
    const next = await h.run(h.publish(prints('{"after": "cancel"}\n')), null);
    expect(next.ok && next.outcome.result).toEqual({ after: "cancel" });
  });

  it("holds a memory bomb at the memory limit with a clear error, and the process's memory stays bounded", async () => {
    await h.run(h.publish(prints('{"warm": true}\n')), null);
    const [pid] = h.pool.pids;
    const status = () => readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = (field: string, text: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(text)?.[1]);
    const linux = process.platform === "linux";
    // Reset the peak resident size (VmHWM) to the current one, so the peak read afterwards is this run's.
    if (linux) writeFileSync(`/proc/${pid}/clear_refs`, "5");
    const before = linux ? status() : "";
    const run = await h.run(h.publish(memoryBomb(), { memoryMB: 32 }), null);
    expect(run.ok).toBe(false);
    if (run.ok) return;
    expect(run.error.message).toContain("hit its memory limit of 32 MB");
    expect(run.error.retryable).toBe(false);
    expect(h.pool.pids).toEqual([pid]);
    if (linux) {
      // The bomb writes to every page it gets: the runner's peak resident memory may exceed what it had
      // before by the app's 32 MB and some room for its thread, never by what an uncapped bomb would take.
      const grewKb = kb("VmHWM", status()) - kb("VmRSS", before);
      expect(grewKb).toBeGreaterThan(0);
      expect(grewKb).toBeLessThan((32 + 48) * 1024);
    }
  }, 30_000);

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
    expect(!foreign.ok && foreign.error.message).toContain('imports function "env.host_call"');
    expect(!foreign.ok && foreign.error.retryable).toBe(false);
    const unknownWasi = await h.run(h.publish(buildModule({ imports: [{ name: "sock_connect", params: [], results: [] }] })), null);
    expect(!unknownWasi.ok && unknownWasi.error.message).toContain("could not run: the module could not be instantiated");
    expect(!unknownWasi.ok && unknownWasi.error.retryable).toBe(false);
    const noStart = await h.run(h.publish(buildModule({ exportStart: false })), null);
    expect(!noStart.ok && noStart.error.message).toContain("exports no _start function");
  });
});
