// The bundles: the extension (Node, CommonJS, `vscode` external), the control panel's and the console's webview
// scripts (browser; the console's CSS imports, its own and uPlot's, become dist/console.css),
// the headless `farmhand-worker` CLI and `farmhand` (its submitter commands beside it), the SDK (farmhand/client), and the handler runner: the child process that runs job code, which the
// handler pool finds next to whichever bundle uses it (dist/), the app thread the runner starts for farm apps, and the
// tracer (OpenTelemetry), which the extension and the CLI load from dist/ only when traces are configured.
// `node esbuild.mjs` builds for development (sourcemaps), `--production` minifies, `--watch` rebuilds on change,
// `--sdk` builds only the SDK, `--types` also writes the SDK's declarations (dist/sdk/client.d.mts; `npm pack` runs
// `--production --types`: the npm package is the SDK and the farmhand CLI, .npmignore lists its files).
import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import * as esbuild from "esbuild";
import { sdkDeclarations } from "./extension/sdk/declarations.mjs";

const production = process.argv.includes("--production");
const watch = process.argv.includes("--watch");
// `--sdk`: only farmhand/client's two bundles (a test builds them before it imports the package by name)
const sdkOnly = process.argv.includes("--sdk");
const types = process.argv.includes("--types");

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
  // CommonJS parts comes from createRequire) and for browsers; its types are generated with `--types`.
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
  const results = await Promise.all(chosen.map((options) => esbuild.build({ ...options, write: false })));
  for (const file of results.flatMap((result) => result.outputFiles)) writeWhole(file.path, file.contents);
}
if (types) {
  writeWhole("dist/sdk/client.d.mts", sdkDeclarations(process.cwd()));
  process.stderr.write("  dist/sdk/client.d.mts\n");
}

/** Written beside and renamed over: a test that loads a bundle while another builds it never reads half a file. */
function writeWhole(path, contents) {
  mkdirSync(dirname(path), { recursive: true });
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, contents);
  renameSync(temporary, path);
}
