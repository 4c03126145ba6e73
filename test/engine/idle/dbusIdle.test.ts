// Machine-wide idle over a real session bus (issue 23): a dbus-daemon of the test's own, and a stand-in desktop
// exporting the GNOME, freedesktop and logind services, read by Farmhand's own D-Bus client.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultIdleSources, MachineIdle } from "../../../extension/policy/idle/machineIdle";
import { startSessionBus, startStandIn, stopAll } from "./desktop";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.runIf(process.platform === "linux")("machine-wide idle over D-Bus", () => {
  let bus: string;
  const dir = mkdtempSync(join(tmpdir(), "farmhand-idle-"));
  // Both buses are the test's own: logind is looked for on the "system" bus, here the same test bus.
  const env = () => ({ DBUS_SESSION_BUS_ADDRESS: bus, DBUS_SYSTEM_BUS_ADDRESS: bus });
  const chain = () => new MachineIdle(defaultIdleSources("linux", env()));

  beforeAll(async () => {
    bus = (await startSessionBus()).address;
  });
  afterAll(stopAll);

  it("GNOME: reads Mutter's idle time rising, reset by input, and the lock from the screen shield", async () => {
    const desktop = await startStandIn(bus, dir, ["mutter"], { lastInputAt: Date.now() - 30_000 });
    const idle = chain();
    try {
      const first = await idle.read();
      expect(first?.source).toMatch(/Mutter/);
      expect(first?.idleMs).toBeGreaterThanOrEqual(30_000);
      expect(first?.locked).toBe(false);
      await sleep(300);
      expect((await idle.read())!.idleMs).toBeGreaterThanOrEqual(first!.idleMs + 250);
      desktop.set({ lastInputAt: Date.now() });
      expect((await idle.read())!.idleMs).toBeLessThan(1_000);
      desktop.set({ lastInputAt: Date.now(), locked: true });
      expect((await idle.read())!.locked).toBe(true);
    } finally {
      idle.dispose();
      await desktop.stop();
    }
  });

  it("the first source that answers wins: Mutter before org.freedesktop.ScreenSaver", async () => {
    const kde = await startStandIn(bus, dir, ["freedesktop"], { lastInputAt: Date.now() - 5_000 });
    const gnome = await startStandIn(bus, dir, ["mutter"], { lastInputAt: Date.now() - 60_000 });
    const idle = chain();
    try {
      expect((await idle.read())?.source).toMatch(/Mutter/);
      await gnome.stop();
      // Mutter gone mid-session: dropped, and the same read falls through to the next source.
      const next = await idle.read();
      expect(next?.source).toMatch(/org\.freedesktop\.ScreenSaver/);
      expect(next?.idleMs).toBeGreaterThanOrEqual(5_000);
      expect(next?.idleMs).toBeLessThan(60_000);
    } finally {
      idle.dispose();
      await kde.stop();
    }
  });

  it("logind last: idle since its hint, locked by its LockedHint; nothing at all when no service answers", async () => {
    const none = chain();
    expect(await none.read()).toBeUndefined();
    const logind = await startStandIn(bus, dir, ["logind"], { lastInputAt: 0, idleHint: true, idleSince: Date.now() - 120_000, locked: true });
    const idle = chain();
    try {
      const reading = await idle.read();
      expect(reading?.source).toMatch(/logind/);
      expect(reading?.idleMs).toBeGreaterThanOrEqual(120_000);
      expect(reading?.locked).toBe(true);
      logind.set({ lastInputAt: 0, idleHint: false, idleSince: Date.now(), locked: false });
      expect(await idle.read()).toMatchObject({ idleMs: 0, locked: false });
    } finally {
      idle.dispose();
      await logind.stop();
    }
  });
});
