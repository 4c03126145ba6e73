// A metered connection (farmhand.meteredLimitMB): NetworkManager's Metered property read over a real bus — a
// dbus-daemon of the test's own, serving a stand-in NetworkManager — by Farmhand's own D-Bus client.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DBusConnection } from "../../../extension/policy/idle/dbusConnection";
import { MachineWatch, type MachineSeen } from "../../../extension/policy/machineWatch";
import { MeteredAllowance, type MeteredTally } from "../../../extension/policy/meteredAllowance";
import { NetworkManagerMetered } from "../../../extension/policy/metered";
import { decide } from "../../../extension/policy/policy";
import { policyInputs } from "../../unit/policy/inputs";
import { startSessionBus, startStandIn, stopAll } from "./desktop";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.runIf(process.platform === "linux")("a metered connection, from NetworkManager over D-Bus", () => {
  let bus: string;
  const dir = mkdtempSync(join(tmpdir(), "farmhand-metered-"));
  const sensor = () => new NetworkManagerMetered(() => DBusConnection.open(bus));

  beforeAll(async () => {
    bus = (await startSessionBus()).address;
  });
  afterAll(stopAll);

  it("reads Metered: yes and guessed yes are metered, no is not, unknown is not known; no NetworkManager, not known", async () => {
    const none = sensor();
    expect(await none.read()).toBeUndefined();
    const nm = await startStandIn(bus, dir, ["networkmanager"], { lastInputAt: 0, metered: 1 });
    const metered = sensor();
    try {
      expect(await metered.read()).toBe(true);
      for (const [value, expected] of [[3, true], [2, false], [4, false], [0, undefined]] as const) {
        nm.set({ lastInputAt: 0, metered: value });
        expect(await metered.read()).toBe(expected);
      }
      // NetworkManager restarting: not known meanwhile, read again on the same connection once it is back
      await nm.stop();
      expect(await metered.read()).toBeUndefined();
      const again = await startStandIn(bus, dir, ["networkmanager"], { lastInputAt: 0, metered: 1 });
      expect(await metered.read()).toBe(true);
      await again.stop();
    } finally {
      metered.dispose();
      none.dispose();
    }
  });

  it("a phone's hotspot comes up: the watch sees it, the allowance applies, and used up the policy pauses", async () => {
    const nm = await startStandIn(bus, dir, ["networkmanager"], { lastInputAt: 0, metered: 4 });
    const nmSensor = sensor();
    let stored: MeteredTally | undefined;
    const allowance = new MeteredAllowance({ get: () => stored, set: (t) => void (stored = t) }, 1_000_000);
    const seen: MachineSeen[] = [];
    // the cost is read on every third tick: 30 ms ticks here
    const watch = new MachineWatch(
      { programs: () => Promise.resolve([]), metered: () => nmSensor.read(), meteredSource: "NetworkManager", dispose: () => nmSensor.dispose() },
      () => ({ pause: [], pauseGpu: [] }),
      (s) => {
        allowance.metered = s.metered;
        seen.push(s);
      },
      30,
    );
    try {
      watch.start();
      for (let i = 0; i < 100 && seen.length === 0; i++) await sleep(20);
      expect(seen[0]).toEqual({ metered: false });
      expect(allowance.left()).toBeUndefined();
      nm.set({ lastInputAt: 0, metered: 3 });
      for (let i = 0; i < 100 && watch.latest.metered !== true; i++) await sleep(20);
      expect(watch.latest.metered).toBe(true);
      expect(allowance.left()).toBe(1_000_000);
      const inputs = () => policyInputs({ metered: { limitBytes: allowance.limitBytes, usedBytes: allowance.usedToday() } });
      expect(decide(inputs())).toEqual({ donate: true });
      allowance.spend(1_000_000);
      expect(decide(inputs())).toMatchObject({ donate: false, cause: "metered", reason: "metered connection: today's 1 MB for jobs is used" });
    } finally {
      watch.dispose();
      await nm.stop();
    }
  });
});
