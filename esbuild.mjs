// The bundles: the extension (Node, CommonJS, `vscode` external), the control panel's and the console's webview
// scripts (browser; the console's CSS imports, its own and uPlot's, become dist/console.css),
// the headless `farmhand-worker` CLI and `farmhand` (its submitter commands beside it), the SDK (farmhand/client), and the handler runner: the child process that runs job code, which the
// handler pool finds next to whichever bundle uses it (dist/), the app thread the runner starts for farm apps, and the
// tracer (OpenTelemetry), which the extension and the CLI load from dist/ only when traces are configured.
// `node esbuild.mjs` builds for development (sourcemaps), `--production` minifies, `--watch` rebuilds on change,
// `--sdk` builds only the SDK.
import * as esbuild from "esbuild";

const production = process.argv.includes("--production");
const watch = process.argv.includes("--watch");
// `--sdk`: only farmhand/client's two bundles (a test builds them before it imports the package by name)
const sdkOnly = process.argv.includes("--sdk");

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
    // tracing: the OpenTelemetry SDK, loaded by the extension and the CLI only when traces are configured
    entryPoints: {
      cli: "extension/cli/cli.ts",
      farmhand: "extension/cli/farmhand.ts",
      handlerRunner: "extension/handlers/runner.ts",
      appThread: "extension/handlers/apps/thread.ts",
      tracing: "extension/tracing/otlpTracer.ts",
    },
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
  // farmhand/client (package.json "exports"): ESM for Node 20 (the websocket client bundled; `require` for its
  // CommonJS parts comes from createRequire) and for browsers; its types are the SDK's own source.
  {
    ...common,
    entryPoints: { "sdk/client": "extension/sdk/client.ts" },
    outdir: "dist",
    outExtension: { ".js": ".mjs" },
    platform: "node",
    format: "esm",
    target: "node20",
    banner: { js: 'import { createRequire as __farmhandRequire } from "node:module"; const require = __farmhandRequire(import.meta.url);' },
  },
  {
    ...common,
    entryPoints: { "sdk/client.browser": "extension/sdk/client.ts" },
    outdir: "dist",
    outExtension: { ".js": ".mjs" },
    platform: "browser",
    format: "esm",
    target: "es2022",
  },
];

const chosen = sdkOnly ? builds.filter((options) => Object.keys(options.entryPoints).some((name) => name.startsWith("sdk/"))) : builds;
if (watch) {
  for (const options of chosen) await (await esbuild.context(options)).watch();
} else {
  await Promise.all(chosen.map((options) => esbuild.build(options)));
}
