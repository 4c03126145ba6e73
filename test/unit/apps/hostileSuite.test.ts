// Hostile apps through the real runner (a ProcessPool child, the app's worker thread, Node's WASI): for each, how
// the job ends and how long that takes, that nothing is left running (a discarded runner's process group is gone;
// a kept runner has no more threads than before), and that the next app job runs.
import { readdirSync, readFileSync } from "node:fs";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { fakeCtx } from "../handlers/fakeCtx";
import { appHarness } from "./harness";
import {
  closesStdio,
  deepRecursion,
  endlessLoop,
  exitsWith,
  importsUnknownWasi,
  memoryBomb,
  outputFlood,
  prints,
  readsArgsAndEnviron,
  sleeper,
  tableBomb,
} from "./hostileApps";
import { TABLE_ELEMENTS_MAX } from "../../../convex/apps/appsWasm";

const linux = process.platform === "linux";
const HOUR_S = 3600;
/** How long a limit may take to land, and a runner to be gone, on a loaded machine (typically tens of ms). */
const SETTLE_MS = 10_000;

function exists(pid: number, group = false): boolean {
  try {
    process.kill(group ? -pid : pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function until(check: () => boolean, what: string, timeoutMs = SETTLE_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const threadsOf = (pid: number) => (linux ? readdirSync(`/proc/${pid}/task`).length : 0);

describe("hostile apps through the real runner", { timeout: 120_000 }, () => {
  const h = appHarness();
  afterAll(() => h.close());
  let pid: number;
  let threads: number;

  /** The runner warm (one app run done, its spare thread started): its pid and thread count. */
  beforeEach(async () => {
    const warm = await h.run(h.publish(prints('{"warm": true}\n')), null);
    expect(warm.ok).toBe(true);
    [pid] = h.pool.pids;
    await new Promise((r) => setTimeout(r, 300)); // the spare thread starts after the run
    threads = threadsOf(pid);
  }, 60_000);

  /** A run that ended its app in flight: the runner and its whole process group are gone, and a new one runs the next job. */
  async function expectDiscarded() {
    await until(() => !exists(pid), `runner ${pid} ended`);
    // The group's other members (the runner's helpers) are signalled with it but may take a moment to be reaped.
    await until(() => !exists(pid, true), `runner ${pid}'s process group ended`);
    expect(h.pool.pids).not.toContain(pid);
    await expectNextRuns();
  }

  /** A run whose app ended by itself: the same runner stays, with no thread more than before, and runs the next job. */
  async function expectKept() {
    expect(h.pool.pids).toEqual([pid]);
    if (linux) await until(() => threadsOf(pid) <= threads, `runner ${pid} back to ${threads} threads (has ${threadsOf(pid)})`);
    await expectNextRuns();
    expect(h.pool.pids).toEqual([pid]);
  }

  async function expectNextRuns() {
    const next = await h.run(h.publish(prints('{"next": "ran"}\n')), null);
    expect(next.ok && next.outcome.result).toEqual({ next: "ran" });
  }

  async function timed<T>(run: () => Promise<T>): Promise<[T, number]> {
    const started = Date.now();
    const value = await run();
    return [value, Date.now() - started];
  }

  it("an endless loop ends at its time limit; its runner is discarded", async () => {
    const [run, ms] = await timed(() => h.run(h.publish(endlessLoop(), { timeoutMs: 500 }), null));
    expect(!run.ok && run.error.message).toContain("ran past its time limit of 500 ms");
    expect(!run.ok && run.error.retryable).toBe(false);
    expect(ms).toBeGreaterThanOrEqual(500);
    expect(ms).toBeLessThan(500 + SETTLE_MS);
    await expectDiscarded();
  });

  it("an hour's sleep in poll_oneoff ends at its time limit, not an hour later; its runner (and the sleeping thread) is gone", async () => {
    const [run, ms] = await timed(() => h.run(h.publish(sleeper(HOUR_S), { timeoutMs: 500 }), null));
    expect(!run.ok && run.error.message).toContain("ran past its time limit of 500 ms");
    expect(ms).toBeLessThan(500 + SETTLE_MS);
    await expectDiscarded();
  });

  it("an hour's sleep ends at once on cancel", async () => {
    const f = fakeCtx();
    const running = h.runner.run({ app: h.publish(sleeper(HOUR_S), { timeoutMs: 600_000 }), payload: null }, f.ctx);
    setTimeout(() => f.controller.abort(new Error("canceled by submitter")), 300);
    const [outcome, ms] = await timed(() => running.then(() => "resolved", (e: Error) => e.message));
    expect(outcome).toBe("canceled by submitter");
    expect(ms).toBeLessThan(300 + SETTLE_MS);
    await expectDiscarded();
  });

  it("memory grown to the cap ends with the memory limit named; the runner's peak stayed near the cap, and it is discarded", async () => {
    const peakKb = () => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]);
    const before = linux ? peakKb() : 0;
    let peak = before;
    const sampler = linux
      ? setInterval(() => {
          try {
            peak = peakKb();
          } catch {
            // gone
          }
        }, 10)
      : undefined;
    const [run, ms] = await timed(() => h.run(h.publish(memoryBomb(), { memoryMB: 32 }), null));
    clearInterval(sampler);
    expect(!run.ok && run.error.message).toContain("hit its memory limit of 32 MB");
    expect(!run.ok && run.error.retryable).toBe(false);
    expect(ms).toBeLessThan(30_000);
    if (linux) expect(peak - before).toBeLessThan((32 + 48) * 1024);
    await expectDiscarded();
  });

  it(`table growth stops at ${TABLE_ELEMENTS_MAX} entries: table.grow answers -1 inside the app`, async () => {
    const run = await h.run(h.publish(tableBomb(TABLE_ELEMENTS_MAX)), null);
    expect(run.ok ? run.outcome.result : run.error.message).toEqual({ capped: true });
    await expectKept();
  });

  it("a deep recursion ends as a stack overflow trap", async () => {
    const [run, ms] = await timed(() => h.run(h.publish(deepRecursion()), null));
    expect(!run.ok && run.error.message).toMatch(/trapped \(RangeError: Maximum call stack size exceeded\)/);
    expect(ms).toBeLessThan(SETTLE_MS);
    await expectKept();
  });

  it("an output flood is stopped at 64 MiB; its runner is discarded", async () => {
    const [run, ms] = await timed(() => h.run(h.publish(outputFlood(), { timeoutMs: 110_000 }), null));
    expect(!run.ok && run.error.message).toContain("printed more than 64 MiB and was stopped");
    expect(!run.ok && run.error.retryable).toBe(false);
    expect(ms).toBeLessThan(100_000);
    await expectDiscarded();
  });

  it.each([
    [1, "exited with code 1"],
    [255, "exited with code 255"],
    [256, "exited with code 256"],
    [0x7fffffff, `exited with code ${0x7fffffff}`],
    [-1, "exited with code -1"],
  ])("proc_exit(%i) fails the job: %s", async (code, message) => {
    const run = await h.run(h.publish(exitsWith(code)), null);
    expect(!run.ok && run.error.message).toContain(message);
    expect(!run.ok && run.error.message).toContain("stderr: failing on purpose");
    expect(!run.ok && run.error.retryable).toBe(true);
    await expectKept();
  });

  it("proc_exit(0) without a result line is a job without a result", async () => {
    const run = await h.run(h.publish(exitsWith(0)), null);
    expect(!run.ok && run.error.message).toContain("must print its result as JSON on its last line of output; it printed nothing");
    await expectKept();
  });

  it("args hold only the app's name; the environment is empty", async () => {
    const run = await h.run(h.publish(readsArgsAndEnviron()), null);
    expect(run.ok).toBe(true);
    const result = (run.ok ? run.outcome.result : {}) as Record<string, string>;
    expect({ ...result, arg0: result.arg0.trim() }).toEqual({ argc: "01", argBytes: "09", envc: "00", envBytes: "00", arg0: "test-app" });
    await expectKept();
  });

  it("fd_renumber on stdio is refused (EBADF), fd_close of stdio changes nothing: stdout still works", async () => {
    const run = await h.run(h.publish(closesStdio()), null);
    expect(run.ok ? run.outcome.result : run.error.message).toEqual({ renumber: "08", close: "00" });
    await expectKept();
  });

  it("a module importing a WASI function Node does not have fails at once, not retryable", async () => {
    const run = await h.run(h.publish(importsUnknownWasi()), null);
    expect(!run.ok && run.error.message).toContain("could not run: the module could not be instantiated");
    expect(!run.ok && run.error.retryable).toBe(false);
    await expectKept();
  });
});
