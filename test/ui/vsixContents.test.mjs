// The rules the packaged-.vsix test applies, checked on made-up lists so that test cannot pass vacuously.
import * as assert from "node:assert/strict";
import { describe, it } from "mocha";
import { vsixListProblems } from "./vsixContents.mjs";

const GOOD = ["package.json", "README.md", "LICENSE", "CHANGELOG.md", "dist/extension.js", "dist/webview.js", "dist/console.js", "dist/console.css", "dist/tracing.js", "media/icon.png"];

describe("the .vsix content rules", () => {
  it("accept the bundles, media, manifest and documents", () => {
    assert.deepEqual(vsixListProblems(GOOD), []);
  });

  it("refuse sources, maps, tests, node_modules and convex/", () => {
    const bad = ["extension/extension.ts", "dist/extension.js.map", "dist/console.css.map", "test/host/index.ts", "node_modules/convex/package.json", "convex/schema.ts"];
    assert.deepEqual(
      vsixListProblems([...GOOD, ...bad]),
      bad.map((file) => `should not ship ${file}`),
    );
  });

  it("require the manifest, the bundles (the tracer's too) and the console's stylesheet", () => {
    assert.deepEqual(vsixListProblems(GOOD.filter((f) => !f.startsWith("dist/"))), [
      "missing dist/extension.js",
      "missing dist/webview.js",
      "missing dist/console.js",
      "missing dist/console.css",
      "missing dist/tracing.js",
    ]);
  });
});
