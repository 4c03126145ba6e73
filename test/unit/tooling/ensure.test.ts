import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(__dirname, "..", "..", "..");

describe(".ci/ensure.mjs on a machine without apt", () => {
  it("installs nothing and says exactly which system packages are missing and how to install them", () => {
    // A PATH with a shell and node only: no dpkg, no apt-get, none of the tools.
    const bin = mkdtempSync(join(tmpdir(), "farmhand-noapt-"));
    try {
      symlinkSync("/bin/sh", join(bin, "sh"));
      symlinkSync(process.execPath, join(bin, "node"));
      const run = spawnSync(process.execPath, [join(root, ".ci", "ensure.mjs")], {
        cwd: root,
        encoding: "utf8",
        env: { PATH: bin, HOME: bin, FARMHAND_CHROMIUM: join(bin, "no-chromium") },
      });
      expect(run.status).toBe(1);
      expect(run.stderr).toContain("no apt/dpkg on this machine, and missing: rg, make, g++, python3, pkg-config, git, chromium");
      expect(run.stderr).toMatch(/install them with: .*chromium.*ripgrep/);
      expect(run.stderr).not.toMatch(/dpkg: not found|ENOENT/);
    } finally {
      rmSync(bin, { recursive: true, force: true });
    }
  });
});
