import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseTimeWindow } from "../../../extension/policy/timeWindows";

type Command = { command: string; title: string; icon?: string };
type MenuItem = { command: string; when?: string };
type Manifest = {
  name: string;
  publisher: string;
  capabilities?: { untrustedWorkspaces?: { supported: boolean | string; description?: string }; virtualWorkspaces?: boolean };
  contributes: {
    commands: Command[];
    menus: Record<string, MenuItem[]>;
    viewsWelcome: Array<{ when: string; contents: string }>;
    walkthroughs?: Array<{ id: string; steps: Array<{ id: string; description: string; media: { image?: string } }> }>;
  };
};

const manifest = JSON.parse(readFileSync(join(__dirname, "../../../package.json"), "utf8")) as Manifest;
const commands = new Map(manifest.contributes.commands.map((c) => [c.command, c]));

describe("the extension's manifest", () => {
  it("declares that Farmhand reads nothing from a workspace: untrusted and virtual workspaces are fine", () => {
    expect(manifest.capabilities?.untrustedWorkspaces?.supported).toBe(true);
    expect(manifest.capabilities?.virtualWorkspaces).toBe(true);
  });

  it("gives the Farm view's title one button that reads as what it does: start while off, stop while donating", () => {
    const title = manifest.contributes.menus["view/title"].filter((m) => m.when?.includes("view == farmhand.farm"));
    const start = title.find((m) => m.command === "farmhand.startDonating");
    const stop = title.find((m) => m.command === "farmhand.stopDonating");
    expect(start?.when).toMatch(/farmhand\.toggleAction == start/);
    expect(stop?.when).toMatch(/farmhand\.toggleAction == stop\b/);
    expect(stop?.when).toMatch(/farmhand\.toggleAction == stopNow/);
    expect(commands.get("farmhand.startDonating")?.icon).not.toBe(commands.get("farmhand.stopDonating")?.icon);
    expect(title.some((m) => m.command === "farmhand.toggle")).toBe(false);
  });

  it("has a Getting Started walkthrough (join, policy, donating, leaving) whose links name real commands, linked from the welcome", () => {
    const walkthrough = manifest.contributes.walkthroughs?.[0];
    expect(walkthrough?.steps.map((s) => s.id)).toEqual(["join", "policy", "donate", "leave"]);
    for (const step of walkthrough!.steps) {
      for (const [, id] of step.description.matchAll(/\(command:(farmhand\.\w+)\)/g)) expect(commands.has(id), id).toBe(true);
      expect(step.media.image).toMatch(/^media\/[\w.-]+\.png$/);
    }
    const welcome = manifest.contributes.viewsWelcome.find((w) => w.when === "!farmhand.joined");
    expect(decodeURIComponent(welcome!.contents)).toContain(`workbench.action.openWalkthrough?"${manifest.publisher}.${manifest.name}#${walkthrough!.id}"`);
  });
});

describe("farmhand.timeWindows in the Settings UI", () => {
  type Property = { order?: number; items?: { pattern?: string } };
  const properties = (JSON.parse(readFileSync(join(__dirname, "../../../package.json"), "utf8")) as { contributes: { configuration: { properties: Record<string, Property> } } })
    .contributes.configuration.properties;

  it.each(["farmhand.timeWindows", "farmhand.quietHours"])("%s flags as typed exactly the windows the policy cannot read", (setting) => {
    const pattern = new RegExp(properties[setting].items!.pattern!);
    const samples = [
      "Mon-Fri 18:00-08:00", "Sat,Sun", "daily 12:00-13:00", "weekdays 09:00-17:00", "weekends", "every day", "mon - fri", "Monday,Wednesday 7:30-9:00",
      "SAT", " Sun 00:00-24:00 ", "weekdays 9-5", "Moonday", "Mon 25:00-26:00", "Mon-Tue-Wed", "", "Mon 10:60-11:00", "Fri 18:00-",
    ];
    for (const sample of samples) expect([sample, pattern.test(sample)]).toEqual([sample, parseTimeWindow(sample).ok]);
  });

  it("lists the preset first and the settings that override it after it", () => {
    const order = (key: string) => properties[`farmhand.${key}`].order ?? Number.POSITIVE_INFINITY;
    for (const key of ["maxConcurrentJobs", "idleMinutes", "otherCpuThresholdPercent"]) expect(order(key)).toBeGreaterThan(order("preset"));
  });
});
