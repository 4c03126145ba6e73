import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { linuxProcessNames, macProcessNames, parsePsNames, runningOf } from "../../../extension/policy/runningPrograms";

describe("the running programs' names", () => {
  const roots: string[] = [];
  afterEach(() => roots.splice(0).forEach((r) => rmSync(r, { recursive: true, force: true })));

  /** A /proc of made-up processes: pid → comm, argv (NUL-separated) and the executable it links to. */
  const proc = (processes: Record<string, { comm: string; argv?: string[]; exe?: string }>) => {
    const root = mkdtempSync(join(tmpdir(), "farmhand-proc-"));
    roots.push(root);
    mkdirSync(join(root, "self"));
    writeFileSync(join(root, "uptime"), "1 1\n");
    for (const [pid, p] of Object.entries(processes)) {
      mkdirSync(join(root, pid));
      writeFileSync(join(root, pid, "comm"), p.comm + "\n");
      if (p.argv) writeFileSync(join(root, pid, "cmdline"), p.argv.join("\0") + "\0");
      if (p.exe) symlinkSync(p.exe, join(root, pid, "exe"));
    }
    return root;
  };

  it("Linux: each process's comm; a cut-short comm's whole name from argv[0], or from the executable when argv[0] was rewritten", async () => {
    const root = proc({
      "1": { comm: "systemd", argv: ["/sbin/init"] },
      "42": { comm: "steam", argv: ["/home/me/.steam/steam", "-silent"] },
      "77": { comm: "obs-studio-port", argv: ["/usr/bin/obs-studio-portable", "--minimize"] },
      "78": { comm: "GameThreadWorke", argv: ["game thread"], exe: "/opt/Games/GameThreadWorkerHost" },
      "79": { comm: "kworker/0:1" },
    });
    expect((await linuxProcessNames(root))?.sort()).toEqual(["GameThreadWorke", "GameThreadWorkerHost", "kworker/0:1", "obs-studio-port", "obs-studio-portable", "steam", "systemd"].sort());
  });

  it("Linux: no /proc, no answer (the lists do nothing, and the panel says so)", async () => {
    expect(await linuxProcessNames("/nonexistent/proc")).toBeUndefined();
  });

  it("macOS: `ps -axo comm=` lines, each to its file name (paths with spaces kept whole)", async () => {
    const out = "/sbin/launchd\n/Applications/zoom.us.app/Contents/MacOS/zoom.us\n/Applications/OBS Studio.app/Contents/MacOS/OBS\nkernel_task\n\n";
    expect(parsePsNames(out)).toEqual(["launchd", "zoom.us", "OBS", "kernel_task"]);
    expect(parsePsNames(undefined)).toBeUndefined();
    const asked: string[][] = [];
    expect(await macProcessNames((command, args) => (asked.push([command, ...args]), Promise.resolve("/usr/bin/steam\n")))).toEqual(["steam"]);
    expect(asked).toEqual([["ps", "-axo", "comm="]]);
  });

  it("matches the donor's names case-insensitively, with or without .exe, and says the first that runs as the donor wrote it", () => {
    const names = ["explorer", "Steam", "obs64", "Zoom.exe"];
    expect(runningOf(names, ["discord", "STEAM"])).toBe("STEAM");
    expect(runningOf(names, ["obs64.exe"])).toBe("obs64.exe");
    expect(runningOf(names, ["zoom"])).toBe("zoom");
    expect(runningOf(names, ["steamwebhelper", "obs"])).toBeUndefined(); // whole names only
    expect(runningOf(names, [])).toBeUndefined();
  });
});
