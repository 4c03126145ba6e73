import { execFileSync } from "node:child_process";
import { statSync } from "node:fs";
import { it } from "vitest";
import { saveFigures } from "./results";

/** The code these figures measure (bench/sources.ts): a change there needs this benchmark re-run. */
const MEASURES = ["bench/bundle.bench.ts", "extension", "media", "convex"];

// The extension's own weight: what every VS Code window loads (bundle) and what a donor downloads (.vsix).
it("measures the packaged bundle sizes", () => {
  execFileSync("npm", ["run", "--silent", "package"], { stdio: "ignore" });
  const kb = (path: string) => Math.round((statSync(path).size / 1024) * 10) / 10;
  const extension = kb("dist/extension.js");
  const consoleScript = kb("dist/console.js");
  saveFigures("extension-size", {
    extension_bundle_minified: { value: extension, unit: "KB", target: "< 500", pass: extension < 500 },
    webview_bundle_minified: { value: kb("dist/webview.js"), unit: "KB" },
    // the operator's console: vscode-elements components and uPlot (issue 14's bound)
    console_webview_bundle_minified: { value: consoleScript, unit: "KB", target: "< 250", pass: consoleScript < 250 },
    console_stylesheet: { value: kb("dist/console.css"), unit: "KB" },
    handler_runner_minified: { value: kb("dist/handlerRunner.js"), unit: "KB" },
    vsix: { value: kb("farmhand.vsix"), unit: "KB" },
  }, MEASURES);
});
