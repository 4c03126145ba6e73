import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SharedActivity } from "../../../extension/policy/sharedActivity";

describe("SharedActivity", () => {
  let dir: string;
  let path: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "farmhand-activity-"));
    path = join(dir, "activity");
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("lets one window see another window's activity", () => {
    const typing = new SharedActivity(path);
    const donating = new SharedActivity(path);
    expect(donating.latest()).toBe(0);
    typing.stamp(1_000_000);
    expect(donating.latest()).toBe(1_000_000);
  });

  it("writes at most once per interval while the user keeps typing", () => {
    const window = new SharedActivity(path, 10_000);
    window.stamp(1_000_000);
    window.stamp(1_005_000); // within 10 s: not written
    expect(window.latest()).toBe(1_000_000);
    window.stamp(1_010_000);
    expect(window.latest()).toBe(1_010_000);
  });

  it("treats a garbled or unwritable file as unknown, never as an error", () => {
    writeFileSync(path, "not a number");
    expect(new SharedActivity(path).latest()).toBe(0);
    const nowhere = new SharedActivity(join(dir, "missing-dir", "activity"));
    expect(() => nowhere.stamp(5)).not.toThrow();
    expect(nowhere.latest()).toBe(0);
  });
});
