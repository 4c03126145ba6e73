// docs/donating.md's settings table is the donor's reference: every setting the extension contributes has a row
// there, and every row names a setting that exists (a renamed or removed setting leaves no stale row behind).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(__dirname, "..", "..", "..");

type Configuration = { properties: Record<string, unknown> };

function contributedSettings(): string[] {
  const manifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { contributes: { configuration: Configuration | Configuration[] } };
  const sections = [manifest.contributes.configuration].flat();
  return sections.flatMap((section) => Object.keys(section.properties)).sort();
}

function documentedSettings(): string[] {
  const guide = readFileSync(join(ROOT, "docs", "donating.md"), "utf8");
  return [...guide.matchAll(/^\| `(farmhand\.[A-Za-z]+)` \|/gm)].map((m) => m[1]).sort();
}

describe("the settings table in docs/donating.md", () => {
  it("has one row per contributed setting, and no other", () => {
    const contributed = contributedSettings();
    expect(contributed.length).toBeGreaterThan(10);
    expect(documentedSettings()).toEqual(contributed);
  });
});
