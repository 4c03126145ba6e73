// Bundles the mocha suite in test/host/ for the extension host: index.js plus one file per *.test.ts, CommonJS,
// `vscode` from the host and `mocha` from the repo's node_modules (mocha loads its reporters by name).
import { readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import * as esbuild from "esbuild";
import { repoDir } from "./paths.mjs";

export const hostSuiteSource = join(repoDir, "test", "host");
export const hostSuiteOut = join(repoDir, "dist-test", "host");

/** Builds the suite and returns the path of its entry point (the payload's `extensionTestsPath`). */
export async function buildHostSuite() {
  const tests = readdirSync(hostSuiteSource).filter((name) => name.endsWith(".test.ts"));
  if (tests.length === 0) throw new Error(`no *.test.ts files in ${hostSuiteSource}`);
  rmSync(hostSuiteOut, { recursive: true, force: true });
  await esbuild.build({
    entryPoints: ["index.ts", ...tests].map((name) => join(hostSuiteSource, name)),
    outdir: hostSuiteOut,
    bundle: true,
    platform: "node",
    format: "cjs",
    target: "node20",
    sourcemap: "inline",
    external: ["vscode", "mocha"],
    logLevel: "warning",
  });
  return join(hostSuiteOut, "index.js");
}
