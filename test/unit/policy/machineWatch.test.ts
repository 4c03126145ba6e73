import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { MachineWatch, type MachineReaders, type MachineSeen } from "../../../extension/policy/machineWatch";
import type { DBusConnection } from "../../../extension/policy/idle/dbusConnection";
import { NetworkManagerMetered, parseNmMetered } from "../../../extension/policy/metered";
import { PauseVotes } from "../../../extension/policy/pauseVotes";

/** Readers that answer what the test sets, counting each read. */
function readers(state: { names: string[] | undefined; metered: boolean | undefined }) {
  const reads = { programs: 0, metered: 0 };
  const r: MachineReaders = {
    programs: () => (reads.programs++, Promise.resolve(state.names)),
    metered: () => (reads.metered++, Promise.resolve(state.metered)),
    meteredSource: "test",
    dispose: () => undefined,
  };
  return { r, reads };
}

describe("the machine watch", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("says what it sees at start and on each change; programs every tick, the connection's cost every third", async () => {
    const state = { names: ["bash"] as string[] | undefined, metered: false as boolean | undefined };
    const { r, reads } = readers(state);
    const seen: MachineSeen[] = [];
    const watch = new MachineWatch(r, () => ({ pause: ["steam"], pauseGpu: ["blender"] }), (s) => seen.push(s), 1_000);
    watch.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(seen).toEqual([{ metered: false }]);
    state.names = ["bash", "Steam", "blender"];
    await vi.advanceTimersByTimeAsync(1_000);
    expect(seen.at(-1)).toEqual({ program: "steam", gpuProgram: "blender", metered: false });
    state.metered = true;
    await vi.advanceTimersByTimeAsync(1_000); // the cost is not read on this tick: nothing new
    expect(seen.at(-1)).toEqual({ program: "steam", gpuProgram: "blender", metered: false });
    await vi.advanceTimersByTimeAsync(1_000); // every third tick it is
    expect(seen.at(-1)).toEqual({ program: "steam", gpuProgram: "blender", metered: true });
    expect(reads).toEqual({ programs: 4, metered: 2 });
    const said = seen.length;
    await vi.advanceTimersByTimeAsync(1_000); // nothing changed: nothing said
    expect(seen.length).toBe(said);
    watch.stop();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(reads.programs).toBe(5); // no reads while stopped
    expect(watch.latest).toEqual({});
  });

  it("lists no processes while neither list names a program; says so when a list names some but they cannot be read", async () => {
    const state = { names: undefined as string[] | undefined, metered: undefined };
    const { r, reads } = readers(state);
    const lists = { pause: [] as string[], pauseGpu: [] as string[] };
    const seen: MachineSeen[] = [];
    const watch = new MachineWatch(r, () => lists, (s) => seen.push(s), 1_000);
    watch.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(reads.programs).toBe(0);
    expect(seen).toEqual([{}]);
    lists.pause = ["steam"];
    watch.poke();
    await vi.advanceTimersByTimeAsync(0);
    expect(seen.at(-1)).toEqual({ programsUnreadable: true });
    watch.dispose();
  });
});

describe("NetworkManager's Metered property", () => {
  it("keeps one connection while it answers; a bus that went away or never answered is opened again on the next read", async () => {
    const connections = [
      { closed: true, call: () => Promise.reject(new Error("closed")), close: () => undefined },
      { closed: false, call: () => Promise.resolve([1]), close: () => undefined },
    ];
    let opened = 0;
    const nm = new NetworkManagerMetered(() => (opened++ === 0 ? Promise.reject(new Error("no bus")) : Promise.resolve(connections.shift() as unknown as DBusConnection)));
    expect(await nm.read()).toBeUndefined(); // no bus
    expect(await nm.read()).toBeUndefined(); // a connection that closed
    expect(await nm.read()).toBe(true);
    expect(await nm.read()).toBe(true);
    expect(opened).toBe(3);
  });

  it("counts yes and guessed yes (a phone's hotspot) as metered, no and guessed no as not, unknown as not known", () => {
    expect([0, 1, 2, 3, 4, 5, "1", undefined].map(parseNmMetered)).toEqual([undefined, true, false, true, false, undefined, undefined, undefined]);
  });
});

describe("several reasons to pause one engine", () => {
  it("runs only while none holds it, and freezes while any holding reason asks to", () => {
    const calls: string[] = [];
    const votes = new PauseVotes({ pause: (reason, how) => void calls.push(`pause ${reason}${how?.suspend ? " (freeze)" : ""}`), resume: () => void calls.push("resume") });
    const idle = votes.voter("idle");
    const programs = votes.voter("programs");
    idle.pause("waiting until this machine is idle");
    programs.pause("steam is running", { suspend: true });
    idle.resume(); // the owner left, but steam still runs
    programs.resume();
    programs.resume(); // not holding: nothing to do
    expect(calls).toEqual(["pause waiting until this machine is idle", "pause steam is running (freeze)", "pause steam is running (freeze)", "resume"]);
  });
});
