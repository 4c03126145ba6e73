// The bundles: the extension (Node, CommonJS, `vscode` external), the control panel's and the console's webview
// scripts (browser; the console's CSS imports, its own and uPlot's, become dist/console.css),
// the headless `farmhand-worker` CLI, and the handler runner: the child process that runs job code, which the
// handler pool finds next to whichever bundle uses it (dist/), and the app thread the runner starts for farm apps.
// `node esbuild.mjs` builds for development (sourcemaps), `--production` minifies, `--watch` rebuilds on change.
import * as esbuild from "esbuild";

const production = process.argv.includes("--production");
const watch = process.argv.includes("--watch");

const common = {
  bundle: true,
  minify: production,
  sourcemap: production ? false : "linked",
  logLevel: "info",
  legalComments: "none",
};

const builds = [
  {
    ...common,
    entryPoints: { extension: "extension/extension.ts" },
    outdir: "dist",
    platform: "node",
    format: "cjs",
    target: "node20",
    external: ["vscode"],
    define: { "import.meta.url": "undefined" },
  },
  {
    ...common,
    entryPoints: { cli: "extension/cli/cli.ts", handlerRunner: "extension/handlers/runner.ts", appThread: "extension/handlers/apps/thread.ts" },
    outdir: "dist",
    platform: "node",
    format: "cjs",
    target: "node20",
    // The sources read import.meta.url only when __dirname is missing (ESM); a CJS bundle always has __dirname.
    define: { "import.meta.url": "undefined" },
  },
  {
    ...common,
    entryPoints: { webview: "media/panel/main.ts", console: "media/console/main.ts" },
    outdir: "dist",
    platform: "browser",
    format: "iife",
    target: "es2022",
  },
];

if (watch) {
  for (const options of builds) await (await esbuild.context(options)).watch();
} else {
  await Promise.all(builds.map((options) => esbuild.build(options)));
}
