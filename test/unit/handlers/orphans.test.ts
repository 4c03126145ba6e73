import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { afterEach, describe, expect, it } from "vitest";
import { HOST_PID_ARG, orphanedFrozenRunners, parsePs, reapOrphanedRunners } from "../../../extension/handlers/orphans";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A stand-in runner: its own process group, the host-pid argument, doing nothing. */
function fakeRunner(hostPid: number): ChildProcess {
  return spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)", "--", HOST_PID_ARG, String(hostPid)], { detached: true, stdio: "ignore" });
}

async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ["-e", "0"], { stdio: "ignore" });
  await new Promise((r) => child.on("exit", r));
  return child.pid!;
}

const gone = (child: ChildProcess) => child.exitCode !== null || child.signalCode !== null;

/** Stop a process's group, and return once `ps` shows it stopped (the state the reaper reads). */
async function freeze(child: ChildProcess): Promise<void> {
  process.kill(-child.pid!, "SIGSTOP");
  while (!execFileSync("ps", ["-o", "stat=", "-p", String(child.pid)], { encoding: "utf8" }).trim().startsWith("T")) await sleep(10);
}

describe("parsePs and orphanedFrozenRunners", () => {
  it("pick the stopped runners whose host is gone, and nothing else", () => {
    const rows = parsePs(
      [
        "  101 Ss   /usr/bin/node /ext/dist/handlerRunner.js --farmhand-host 50",
        "  102 T    /usr/bin/node /ext/dist/handlerRunner.js --farmhand-host 50",
        "  103 Tl   node --import tsx /src/runner.ts --farmhand-host 60",
        "  104 T    node /src/runner.ts --farmhand-host 500",
        "  105 T    vim notes.txt",
      ].join("\n"),
    );
    expect(rows[1]).toEqual({ pid: 102, stat: "T", args: "/usr/bin/node /ext/dist/handlerRunner.js --farmhand-host 50" });
    expect(orphanedFrozenRunners(rows, (pid) => pid === 60)).toEqual([102, 104]);
  });
});

describe.runIf(process.platform !== "win32")("reapOrphanedRunners (real processes)", () => {
  const children: ChildProcess[] = [];
  afterEach(() => {
    for (const c of children.splice(0)) {
      try {
        process.kill(-c.pid!, "SIGKILL");
      } catch {
        // ended by the test
      }
    }
  });

  it("ends a frozen runner whose host died, and leaves alone a frozen one whose host lives and a running orphan", async () => {
    const orphan = fakeRunner(await deadPid());
    const ours = fakeRunner(process.pid);
    const runningOrphan = fakeRunner(await deadPid());
    children.push(orphan, ours, runningOrphan);
    const orphanExit = once(orphan, "exit");
    await freeze(orphan);
    await freeze(ours);
    const ended = await reapOrphanedRunners();
    expect(ended).toContain(orphan.pid);
    expect(ended).not.toContain(ours.pid);
    expect(ended).not.toContain(runningOrphan.pid);
    await orphanExit;
    expect(orphan.signalCode).toBe("SIGKILL");
    expect(gone(ours)).toBe(false);
    expect(gone(runningOrphan)).toBe(false);
  });
});
