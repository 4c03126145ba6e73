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

async function until(what: string, check: () => boolean): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (check()) return;
    await sleep(25);
  }
  throw new Error(`timed out waiting until ${what}`);
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

describe.runIf(process.platform === "linux")("ProcessPool freezing a job (real child processes)", () => {
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
    await sleep(700);
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
    const noFreeze = new ProcessPool({ freezable: false });
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
