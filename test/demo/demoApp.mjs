// The demo's farm app: the example apps are built (Debian's clang; skipped with a note when the toolchain is
// missing) and the Mandelbrot renderer is published with `farmhand-worker publish`, so the demo submitter can send
// it app.mandelbrot jobs that the extension runs in its WASI sandbox.
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { repoDir } from "../harness/paths.mjs";

export const DEMO_APP = "mandelbrot";

/** Build and publish the demo app; resolves with the published version, or null (with the reason printed). */
export async function publishDemoApp(url, publishKey, { siteUrl } = {}) {
  let built;
  try {
    const { buildApps } = await import("../../examples/apps/build.mjs");
    built = buildApps({ log: () => undefined });
  } catch (error) {
    console.warn(`  apps: not in this demo — the example apps could not be built (${error.message.split("\n")[0]})`);
    return null;
  }
  const cli = join(repoDir, "extension", "cli", "cli.ts");
  const args = ["--import", "tsx", cli, "publish", "--url", url, "--name", DEMO_APP, "--memory-mb", "64", "--timeout-ms", "60000"];
  if (siteUrl) args.push("--site-url", siteUrl);
  const run = spawnSync(process.execPath, [...args, built[DEMO_APP]], { cwd: repoDir, encoding: "utf8", env: { ...process.env, FARMHAND_KEY: publishKey } });
  if (run.status !== 0) {
    console.warn(`  apps: not in this demo — publishing failed: ${(run.stderr || run.stdout).trim()}`);
    return null;
  }
  const published = JSON.parse(run.stdout.trim().split("\n").at(-1));
  console.log(`  published app ${published.name} v${published.version} (sha256 ${published.sha256.slice(0, 12)}…)`);
  return published;
}

/** One Mandelbrot tile, somewhere different each round. */
export function demoAppJob(round) {
  const spots = [
    { x: -0.5, y: 0, span: 3 },
    { x: -0.745, y: 0.113, span: 0.02 },
    { x: -1.25, y: 0.02, span: 0.1 },
    { x: 0.285, y: 0.01, span: 0.05 },
  ];
  return { type: `app.${DEMO_APP}`, payload: { ...spots[round % spots.length], width: 160, height: 120, maxIter: 400 } };
}
