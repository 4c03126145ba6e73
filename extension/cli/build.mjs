// Bundles the headless worker: dist/cli.js (the `farmhand-worker` bin) and dist/handlerRunner.js, the child
// process that runs job code. The pool looks for handlerRunner.js next to the bundle that uses it, so the
// extension's bundle in dist/ finds the same file. `node extension/cli/build.mjs [--production]`
import * as esbuild from "esbuild";

const production = process.argv.includes("--production");

await esbuild.build({
  entryPoints: { cli: "extension/cli/cli.ts", handlerRunner: "extension/handlers/runner.ts" },
  outdir: "dist",
  bundle: true,
  platform: "node",
  format: "cjs",
  target: "node20",
  minify: production,
  sourcemap: production ? false : "linked",
  legalComments: "none",
  logLevel: "info",
  // The sources read import.meta.url only when __dirname is missing (ESM); a CJS bundle always has __dirname.
  define: { "import.meta.url": "undefined" },
});
