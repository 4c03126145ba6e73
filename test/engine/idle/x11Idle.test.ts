// Machine-wide idle on X11 for real (issue 23): Xvfb, xprintidle, synthetic key presses from xdotool, and an engine
// whose running job is frozen (SIGSTOP, the existing suspension path) when a key is pressed anywhere on the display.
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createBuiltinRegistry } from "../../../extension/handlers";
import { PRIMES_MAX_N } from "../../../extension/handlers/impl/primes";
import { XprintidleSource } from "../../../extension/policy/idle/commandIdleSources";
import { defaultIdleSources, MachineIdle } from "../../../extension/policy/idle/machineIdle";
import { X11IdleSource } from "../../../extension/policy/idle/x11IdleSource";
import { workWhileAway } from "../../../extension/policy/idle/workWhileAway";
import { Worker } from "../../../extension/worker/worker";
import { ScriptedFarm } from "../../unit/worker/scriptedFarm";
import { output, startXvfb, stopAll, xdotool } from "./desktop";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function procState(pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0];
}

async function until(what: string, check: () => boolean, timeoutMs = 20_000): Promise<number> {
  const from = performance.now();
  while (!check()) {
    if (performance.now() - from > timeoutMs) throw new Error(`timed out waiting until ${what}`);
    await sleep(5);
  }
  return performance.now() - from;
}

describe.runIf(process.platform === "linux")("machine-wide idle on X11 (Xvfb)", () => {
  let display: string;
  beforeAll(async () => {
    display = await startXvfb();
  });
  afterAll(stopAll);

  it.each([
    ["Farmhand's own X11 connection", () => new X11IdleSource(display)],
    ["xprintidle", () => new XprintidleSource(display)],
  ])("%s reads the idle time rising, and a synthetic key press resets it", async (_name, make) => {
    const source = make();
    await xdotool(display, "key", "shift");
    const first = (await source.read()).idleMs;
    await sleep(700);
    const later = (await source.read()).idleMs;
    expect(later).toBeGreaterThanOrEqual(first + 600);
    await xdotool(display, "key", "shift");
    expect((await source.read()).idleMs).toBeLessThan(later);
    expect((await source.read()).idleMs).toBeLessThan(500);
    source.dispose();
  });

  it("sees the active window go fullscreen (EWMH, as a window manager sets it) and leave it", async () => {
    const source = new X11IdleSource(display);
    expect((await source.read()).fullscreen).toBeUndefined();
    const root = /Window id: (0x[0-9a-f]+)/.exec(await output("xwininfo", ["-root"], display))![1];
    await output("xprop", ["-root", "-f", "_NET_ACTIVE_WINDOW", "32c", "-set", "_NET_ACTIVE_WINDOW", String(Number(root))], display);
    await output("xprop", ["-root", "-f", "_NET_WM_STATE", "32a", "-set", "_NET_WM_STATE", "_NET_WM_STATE_FULLSCREEN"], display);
    expect((await source.read()).fullscreen).toBe(true);
    await output("xprop", ["-root", "-remove", "_NET_WM_STATE"], display);
    expect((await source.read()).fullscreen).toBeUndefined();
    source.dispose();
  });

  it("falls through the D-Bus sources that do not answer to X11; to xprintidle where the connection cannot be made", async () => {
    const noBus = { DBUS_SESSION_BUS_ADDRESS: "unix:path=/nonexistent/bus", DBUS_SYSTEM_BUS_ADDRESS: "unix:path=/nonexistent/bus" };
    const idle = new MachineIdle(defaultIdleSources("linux", { DISPLAY: display, ...noBus }));
    expect((await idle.read())?.source).toBe("X11 XScreenSaver");
    idle.dispose();
    // a display this probe does not connect to itself (TCP, as SSH forwarding gives) is left to xprintidle
    const chain = new MachineIdle([new X11IdleSource("localhost:99"), new XprintidleSource(display)]);
    expect((await chain.read())?.source).toMatch(/xprintidle/);
    chain.dispose();
  });

  it("an engine works while the display is idle and freezes its running job within 1.2 s of a key press", async () => {
    const { registry, pool } = createBuiltinRegistry({ ollama: false, pool: { maxIdle: 1 } });
    const farm = new ScriptedFarm();
    const worker = new Worker({ client: farm, handlers: registry, concurrency: 1, suspendLimitMs: 60 * 60_000, onlyCapabilities: ["demo.primes"] });
    farm.offer("demo.primes", { n: PRIMES_MAX_N }, 60_000);
    const log: string[] = [];
    await xdotool(display, "key", "shift");
    // as the CLI does: started, then held until the machine is idle (start takes its state synchronously)
    const started = worker.start();
    const follow = workWhileAway(worker, new MachineIdle([new X11IdleSource(display)]), 3_000, (l) => log.push(l));
    try {
      await started;
      expect(worker.state).toBe("paused"); // the key press just now: the owner is present
      await until("the job runs once the display is idle", () => worker.snapshot().running.length === 1 && pool.pids.length === 1);
      const [pid] = pool.pids;
      await until("the job's process runs", () => procState(pid) !== "T");
      await xdotool(display, "key", "a");
      await until("the job is frozen", () => procState(pid) === "T", 5_000);
      // how long ago the key was pressed, by the X server's own clock
      const clock = new X11IdleSource(display);
      const frozenAfterMs = (await clock.read()).idleMs;
      clock.dispose();
      expect(frozenAfterMs).toBeLessThan(1_200);
      expect(worker.snapshot().running[0].suspendedSince).toBeDefined();
      expect(log.some((l) => /input on this machine \(read from X11/.test(l))).toBe(true);
      // idle again: thawed and running on
      await until("the job is thawed once idle again", () => procState(pid) !== "T", 10_000);
      expect(worker.state).toBe("running");
    } finally {
      follow.dispose();
      await worker.stop();
      pool.close();
    }
  });
});
