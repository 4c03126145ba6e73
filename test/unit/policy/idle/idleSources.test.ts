import { afterEach, describe, expect, it, vi } from "vitest";
import { IoregIdleSource, parseXprintidle, XprintidleSource } from "../../../../extension/policy/idle/commandIdleSources";
import { parseLogindSession } from "../../../../extension/policy/idle/dbusIdleSources";
import { IdleSourceError, type IdleReading, type IdleSource } from "../../../../extension/policy/idle/idleSource";
import { AwayWatch } from "../../../../extension/policy/idle/awayWatch";
import { MachineIdle } from "../../../../extension/policy/idle/machineIdle";

const NOW = 1_764_190_600_000;

describe("logind session hints", () => {
  it("idle since the hint was set (IdleSinceHint is microseconds of wall time)", () => {
    expect(parseLogindSession({ IdleHint: true, IdleSinceHint: (NOW - 90_000) * 1000, LockedHint: false }, NOW)).toEqual({ idleMs: 90_000, locked: false });
  });

  it("active when the desktop cleared the hint; locked when LockedHint says so", () => {
    expect(parseLogindSession({ IdleHint: false, IdleSinceHint: (NOW - 5_000) * 1000, LockedHint: true }, NOW)).toEqual({ idleMs: 0, locked: true });
  });

  it("no answer when no desktop ever set the hint (never 'active forever'), or the properties are garbage", () => {
    expect(() => parseLogindSession({ IdleHint: false, IdleSinceHint: 0 }, NOW)).toThrow(IdleSourceError);
    expect(() => parseLogindSession({ IdleHint: "yes" }, NOW)).toThrow(IdleSourceError);
    expect(() => parseLogindSession(undefined, NOW)).toThrow(IdleSourceError);
  });
});

describe("xprintidle", () => {
  it("reads milliseconds", () => {
    expect(parseXprintidle("1181\n")).toBe(1181);
  });

  it("throws on an error text or an empty output", () => {
    expect(() => parseXprintidle('couldn\'t open display ":9"\n')).toThrow(IdleSourceError);
    expect(() => parseXprintidle("")).toThrow(IdleSourceError);
    expect(() => parseXprintidle("-5")).toThrow(IdleSourceError);
  });

  it("runs on the given display only; without one it does not answer", async () => {
    const run = vi.fn((_c: string, _a: string[], env?: NodeJS.ProcessEnv) => Promise.resolve(env?.DISPLAY === ":3" ? "42\n" : "bad"));
    await expect(new XprintidleSource(":3", run).read()).resolves.toEqual({ idleMs: 42 });
    await expect(new XprintidleSource(undefined, run).read()).rejects.toThrow(/no X display/);
  });

  it("fails when the command cannot be run (missing, permission denied)", async () => {
    const run = () => Promise.reject(Object.assign(new Error("spawn xprintidle EACCES"), { code: "EACCES" }));
    await expect(new XprintidleSource(":0", run).read()).rejects.toThrow(/EACCES/);
  });
});

describe("macOS ioreg", () => {
  it("answers HIDIdleTime, fails without it", async () => {
    await expect(new IoregIdleSource(() => Promise.resolve(1234)).read()).resolves.toEqual({ idleMs: 1234 });
    await expect(new IoregIdleSource(() => Promise.resolve(undefined)).read()).rejects.toThrow(/HIDIdleTime/);
  });
});

/** A source that answers from a script: a reading, or an Error to throw. */
function scripted(name: string, answers: Array<IdleReading | Error>, fastPollMs = 500): IdleSource & { reads: number; disposed: boolean } {
  return {
    name,
    fastPollMs,
    reads: 0,
    disposed: false,
    read() {
      const answer = answers[Math.min(this.reads++, answers.length - 1)];
      return answer instanceof Error ? Promise.reject(answer) : Promise.resolve(answer);
    },
    dispose() {
      this.disposed = true;
    },
  };
}

describe("the chain of sources", () => {
  it("takes the first source that answers, and names it once", async () => {
    const mutter = scripted("mutter", [new Error("ServiceUnknown")]);
    const screensaver = scripted("screensaver", [{ idleMs: 10 }, { idleMs: 20 }]);
    const logind = scripted("logind", [{ idleMs: 99 }]);
    const named: Array<string | undefined> = [];
    const chain = new MachineIdle([mutter, screensaver, logind], (s) => named.push(s));
    expect(await chain.read()).toMatchObject({ idleMs: 10, source: "screensaver" });
    expect(await chain.read()).toMatchObject({ idleMs: 20, source: "screensaver" });
    expect(named).toEqual(["screensaver"]);
    expect(mutter.disposed).toBe(true);
    expect(mutter.reads).toBe(1); // dropped for the session: never asked again
    expect(logind.reads).toBe(0);
  });

  it("a source that fails later is dropped and the next one answers the same read", async () => {
    const first = scripted("first", [{ idleMs: 1 }, new Error("bus closed")]);
    const second = scripted("second", [{ idleMs: 2 }]);
    const named: Array<string | undefined> = [];
    const chain = new MachineIdle([first, second], (s) => named.push(s));
    await chain.read();
    expect(await chain.read()).toMatchObject({ idleMs: 2, source: "second" });
    expect(named).toEqual(["first", "second"]);
  });

  it("with none left, answers undefined and says so once", async () => {
    const named: Array<string | undefined> = [];
    const chain = new MachineIdle([scripted("a", [{ idleMs: 1 }, new Error("x")])], (s) => named.push(s));
    await chain.read();
    expect(await chain.read()).toBeUndefined();
    expect(await chain.read()).toBeUndefined();
    expect(chain.exhausted).toBe(true);
    expect(named).toEqual(["a", undefined]);
  });
});

describe("the away watch", () => {
  afterEach(() => vi.useRealTimers());

  it("reads at the fast rate while away, notices a return on the next read, then waits for the threshold", async () => {
    vi.useFakeTimers();
    const answers: IdleReading[] = [{ idleMs: 600_000 }, { idleMs: 600_500 }, { idleMs: 120 }, { idleMs: 4_000 }];
    const source = scripted("s", answers, 500);
    const changes: Array<boolean | undefined> = [];
    const watch = new AwayWatch(new MachineIdle([source]), { thresholdMs: () => 300_000, slowPollMs: 5_000, onChange: (s) => changes.push(s?.away) });
    watch.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(changes).toEqual([true]);
    await vi.advanceTimersByTimeAsync(500);
    expect(source.reads).toBe(2);
    await vi.advanceTimersByTimeAsync(500);
    expect(changes).toEqual([true, false]); // the key press, seen one fast period later
    await vi.advanceTimersByTimeAsync(4_999);
    expect(source.reads).toBe(3); // present: no fast polling
    await vi.advanceTimersByTimeAsync(1);
    expect(source.reads).toBe(4);
    watch.dispose();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(source.reads).toBe(4);
  });

  it("reads again just when the idle time could reach the threshold", async () => {
    vi.useFakeTimers();
    const source = scripted("s", [{ idleMs: 298_000 }, { idleMs: 300_000 }], 500);
    const changes: Array<boolean | undefined> = [];
    const watch = new AwayWatch(new MachineIdle([source]), { thresholdMs: () => 300_000, slowPollMs: 5_000, onChange: (s) => changes.push(s?.away) });
    watch.start();
    await vi.advanceTimersByTimeAsync(1_999);
    expect(source.reads).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(changes).toEqual([false, true]);
    watch.dispose();
  });

  it("a locked screen is away however recent the input", async () => {
    vi.useFakeTimers();
    const source = scripted("s", [{ idleMs: 10, locked: true }]);
    const changes: Array<boolean | undefined> = [];
    const watch = new AwayWatch(new MachineIdle([source]), { thresholdMs: () => 300_000, onChange: (s) => changes.push(s?.away) });
    watch.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(changes).toEqual([true]);
    watch.dispose();
  });

  it("a fullscreen application holds the owner present however long without input; a lock still means away", async () => {
    vi.useFakeTimers();
    const source = scripted("s", [{ idleMs: 900_000 }, { idleMs: 900_500, fullscreen: true }, { idleMs: 901_000, fullscreen: true, locked: true }]);
    const changes: Array<boolean | undefined> = [];
    const watch = new AwayWatch(new MachineIdle([source]), { thresholdMs: () => 300_000, onChange: (s) => changes.push(s?.away) });
    watch.start();
    await vi.advanceTimersByTimeAsync(0);
    await vi.advanceTimersByTimeAsync(500);
    expect(changes).toEqual([true, false]);
    await vi.advanceTimersByTimeAsync(500);
    expect(changes).toEqual([true, false, true]);
    watch.dispose();
  });

  it("stops, saying so, when no source answers", async () => {
    vi.useFakeTimers();
    const source = scripted("s", [new Error("no bus")]);
    const changes: unknown[] = [];
    const watch = new AwayWatch(new MachineIdle([source]), { thresholdMs: () => 1, onChange: (s) => changes.push(s) });
    watch.start();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(changes).toEqual([undefined]);
    expect(source.reads).toBe(1);
  });
});
