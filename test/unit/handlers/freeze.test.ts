import { readFileSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { ProcessPool } from "../../../extension/handlers/processPool";
import type { Freezer } from "../../../extension/worker/handler";
import { fakeCtx } from "./fakeCtx";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** CPU time (user + system, ms) a process has used, and its state letter, from /proc (Linux). */
function procStat(pid: number): { cpuMs: number; state: string } {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // fields[0] is field 3 (state); utime and stime are fields 14 and 15, in clock ticks of 10 ms
  return { state: fields[0], cpuMs: (Number(fields[11]) + Number(fields[12])) * 10 };
}

/**
 * Polls until `check` holds. The minute is a backstop naming what never came, not a timing assumption: a busy
 * machine may take seconds where an idle one takes milliseconds.
 */
async function until(what: string, check: () => boolean): Promise<void> {
  const giveUpAt = Date.now() + 60_000;
  while (!check()) {
    if (Date.now() > giveUpAt) throw new Error(`not within a minute: ${what}`);
    await sleep(25);
  }
}

/** A demo.primes run large enough to keep its child busy for the whole test, with the freezer the pool offers. */
function startPrimes(pool: ProcessPool) {
  const f = fakeCtx();
  let freezer: Freezer | undefined;
  f.ctx.setFreezer = (fz) => (freezer = fz);
  const running = pool.run({ builtin: "demo.primes" }, { n: 2_000_000_000 }, f.ctx);
  running.catch(() => undefined);
  return { f, running, freezer: () => freezer };
}

// The generous time limit is for a busy machine: no test here waits on the clock, they wait for what the children do.
describe.runIf(process.platform === "linux")("ProcessPool freezing a job (real child processes)", { timeout: 180_000 }, () => {
  // A grace far beyond the test's time limit: a job that is not killed at once fails the test.
  const pool = new ProcessPool({ graceMs: 60_000, niceness: 0 });
  afterAll(() => pool.close());

  it("a frozen job's CPU time stops advancing, and advances again once thawed", async () => {
    const { f, freezer } = startPrimes(pool);
    await until("the job reports progress", () => f.progress.length > 0);
    const pid = pool.pids[0];
    expect(freezer()).toBeDefined();
    const runningFrom = procStat(pid).cpuMs;
    await until("it uses CPU", () => procStat(pid).cpuMs > runningFrom);

    freezer()!.freeze();
    await until("it is stopped", () => procStat(pid).state === "T");
    const frozenAt = procStat(pid).cpuMs;
    const progressAt = f.progress.length;
    // Frozen while another job of the same priority gets 300 ms of CPU: time the first would have had to run, on a
    // busy machine as on an idle one (a fixed wait proves nothing where the machine is too busy to run either).
    const other = startPrimes(pool);
    const otherPid = pool.pids.find((p) => p !== pid)!;
    await until("the other job has had 300 ms of CPU", () => procStat(otherPid).cpuMs >= 300);
    other.f.controller.abort(new Error("done with it"));
    expect(procStat(pid).cpuMs).toBe(frozenAt);
    expect(procStat(pid).state).toBe("T");
    expect(f.progress.length).toBeLessThanOrEqual(progressAt + 1); // at most one message already on its way

    freezer()!.thaw();
    await until("it uses CPU again", () => procStat(pid).cpuMs > frozenAt);
    expect(procStat(pid).state).not.toBe("T");
    await until("it reports progress again", () => f.progress.length > progressAt + 1);
    f.controller.abort(new Error("done with it"));
  });

  it("a job aborted while frozen is killed at once, with its whole process group", async () => {
    const { f, running, freezer } = startPrimes(pool);
    await until("the job reports progress", () => f.progress.length > 0);
    const pid = pool.pids.at(-1)!;
    freezer()!.freeze();
    await until("it is stopped", () => procStat(pid).state === "T");
    f.controller.abort(new Error("given back"));
    await expect(running).rejects.toThrow("given back");
    expect(() => process.kill(pid, 0)).toThrow();
  });

  it("offers no freezer when freezing is off (Windows)", async () => {
    const noFreeze = new ProcessPool({ freezable: false, niceness: 0 });
    try {
      const f = fakeCtx();
      let offered = false;
      f.ctx.setFreezer = () => (offered = true);
      expect(await noFreeze.run({ builtin: "demo.echo" }, "x", f.ctx)).toBe("x");
      expect(offered).toBe(false);
    } finally {
      noFreeze.close();
    }
  });
});
