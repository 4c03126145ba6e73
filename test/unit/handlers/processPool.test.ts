import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { getPriority } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import { ProcessPool } from "../../../extension/handlers/processPool";
import { fakeCtx } from "./fakeCtx";
import { loadGatePath } from "./fixtures/loadGate";

const fixtures = join(__dirname, "fixtures", "jobs.ts");
const mod = (exportName: string) => ({ module: fixtures, exportName });

// No test here waits on the clock: they wait for what the child says. The generous timeout is for a busy machine,
// where a fresh child at low priority can take seconds to start.
describe("ProcessPool", { timeout: 60_000 }, () => {
  // A grace far longer than any test: a canceled job ends here because its child said so, never because the kill
  // timer happened to come first on a slow machine. The one test of the kill has a pool of its own.
  const pool = new ProcessPool({ graceMs: 600_000, niceness: 10 });
  afterAll(() => pool.close());

  it("runs demo.echo in a child process at lowered priority and streams its output", async () => {
    const f = fakeCtx();
    const result = await pool.run({ builtin: "demo.echo" }, { text: "hello\n", n: 1 }, f.ctx);
    expect(result).toEqual({ text: "hello\n", n: 1 });
    expect(f.output()).toBe("hello\n");
    const [childPid] = pool.pids;
    expect(childPid).not.toBe(process.pid);
    expect(getPriority(childPid)).toBe(10);
    if (process.platform === "linux" && existsSync("/proc/self/autogroup")) {
      // Its own scheduling group, niced as a whole, so it cannot spend the host's group share.
      const own = readFileSync("/proc/self/autogroup", "utf8").split(" ")[0];
      const [group, , nice] = readFileSync(`/proc/${childPid}/autogroup`, "utf8").trim().split(" ");
      expect(group).not.toBe(own);
      expect(nice).toBe("10");
    }
  });

  it("reuses a healthy child for the next job", async () => {
    const a = await pool.run(mod("pid"), null, fakeCtx().ctx);
    const b = await pool.run(mod("pid"), null, fakeCtx().ctx);
    expect(a).toBe(b);
    expect(a).not.toBe(process.pid);
  });

  it("counts primes and reports progress", async () => {
    const f = fakeCtx();
    expect(await pool.run({ builtin: "demo.primes" }, { n: 3_000_000 }, f.ctx)).toEqual({ n: 3_000_000, count: 216_816 });
    expect(f.progress.length).toBeGreaterThanOrEqual(1);
    expect(f.progress.at(-1)?.[0]).toBe(1);
  });

  it("rejects a bad demo.primes payload as not retryable", async () => {
    await expect(pool.run({ builtin: "demo.primes" }, { n: "lots" }, fakeCtx().ctx)).rejects.toMatchObject({
      message: 'demo.primes needs a payload { n: whole number from 0 to 2000000000 }, got {"n":"lots"}',
      retryable: false,
    });
  });

  it("turns a thrown error into a retryable failure, and keeps a HandlerError's retry flag", async () => {
    await expect(pool.run(mod("throws"), null, fakeCtx().ctx)).rejects.toMatchObject({ message: "this handler always throws", retryable: true });
    await expect(pool.run(mod("throwsFinal"), null, fakeCtx().ctx)).rejects.toMatchObject({ retryable: false });
  });

  it("fails the job of a child that kills itself, then goes on", async () => {
    await expect(pool.run(mod("crashes"), null, fakeCtx().ctx)).rejects.toThrow("the handler's process exited unexpectedly (signal SIGKILL)");
    expect(await pool.run({ builtin: "demo.echo" }, "still here", fakeCtx().ctx)).toBe("still here");
  });

  it("signals a canceled job and lets it stop by itself", async () => {
    const f = fakeCtx();
    const running = pool.run(mod("waitsForAbort"), null, f.ctx);
    await f.reported("waiting"); // the job code runs and listens to its signal
    f.controller.abort(new Error("canceled"));
    // The child resolved on its own, but the job was canceled, so its child is not reused.
    await expect(running).resolves.toBe("stopped");
  });

  it("kills a canceled job that ignores the signal after the grace period, not before", async () => {
    const quick = new ProcessPool({ graceMs: 300, niceness: 10 });
    const signals = vi.spyOn(process, "kill");
    try {
      const f = fakeCtx();
      const running = quick.run(mod("hangs"), null, f.ctx);
      running.catch(() => undefined); // awaited below; handled at once so a failed step here does not leave it loose
      // Wait until the job code runs (a fresh child at low priority can take a while to start).
      await f.reported("hanging");
      const [child] = quick.pids;
      // the grace is the pool's timer: on a clock this test moves
      vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
      f.controller.abort(new Error("the job was canceled"));
      await f.reported("ignoring the cancel"); // the job code heard it, and goes on
      const sent = () => signals.mock.calls.filter(([pid]) => pid === -child).map(([, signal]) => signal);
      expect(sent()).toEqual(["SIGTERM"]);
      vi.advanceTimersByTime(299);
      expect(sent()).toEqual(["SIGTERM"]);
      vi.advanceTimersByTime(1);
      expect(sent()).toEqual(["SIGTERM", "SIGKILL"]);
      await expect(running).rejects.toThrow("the job was canceled");
      expect(quick.pids).toEqual([]);
      expect(f.progress).toEqual([
        [0, "hanging"],
        [0, "ignoring the cancel"],
      ]);
    } finally {
      vi.useRealTimers();
      signals.mockRestore();
      quick.close();
    }
  });

  it("fails the job of job code that throws outside its promise, and does not reuse that child", async () => {
    await expect(pool.run(mod("throwsLater"), null, fakeCtx().ctx)).rejects.toMatchObject({
      message: "uncaught error in job code: stray callback blew up",
      retryable: true,
    });
    expect(await pool.run({ builtin: "demo.echo" }, "next", fakeCtx().ctx)).toBe("next");
  });

  it("coalesces a flood of progress reports, keeping the last", async () => {
    const f = fakeCtx();
    expect(await pool.run(mod("chattyProgress"), null, f.ctx)).toBe("done");
    expect(f.progress.length).toBeLessThanOrEqual(3);
    expect(f.progress.at(-1)).toEqual([1, "step 1000"]);
  });

  it("does not start job code canceled while it was loading", async () => {
    const f = fakeCtx();
    const gate = loadGatePath(process.pid);
    rmSync(gate, { force: true });
    const running = pool.run({ module: join(__dirname, "fixtures", "slowToLoad.ts") }, null, f.ctx);
    try {
      await f.reported("loading"); // the runner is inside the job code's import, blocked there
      f.controller.abort(new Error("canceled early")); // the cancel is sent while it loads
    } finally {
      writeFileSync(gate, ""); // then loading ends
    }
    await expect(running).rejects.toThrow("canceled early");
    expect(f.output()).toBe("");
    rmSync(gate, { force: true });
  });

  it("does not even start a job whose signal is already aborted", async () => {
    const f = fakeCtx();
    f.controller.abort(new Error("too late"));
    const before = pool.pids.length;
    await expect(pool.run({ builtin: "demo.echo" }, 1, f.ctx)).rejects.toThrow("too late");
    expect(pool.pids.length).toBe(before);
  });

  it("says clearly when a module does not export the function", async () => {
    await expect(pool.run(mod("nope"), null, fakeCtx().ctx)).rejects.toThrow(`${fixtures} does not export a function "nope"`);
  });

  it("refuses work once closed", async () => {
    const p = new ProcessPool();
    p.close();
    await expect(p.run({ builtin: "demo.echo" }, 1, fakeCtx().ctx)).rejects.toThrow("the handler pool is closed");
  });
});
