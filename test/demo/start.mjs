#!/usr/bin/env node
// `npm start`: a whole farm on this machine, no account needed.
//  1. builds and packages the extension (.vsix),
//  2. starts the loopback Convex test server (the real convex/ functions through convex-test) seeded with an org,
//  3. starts code-server with the packaged extension installed and provisioned to join that farm,
//  4. keeps a demo submitter feeding demo.primes, demo.echo and recipe jobs.
// Production farms run on a real Convex deployment: `npm run start:convex`.
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { repoDir } from "../harness/paths.mjs";
import { DEMO_CAPABILITIES, feedJobs, launchEditor, onStop, prepare } from "./demo.mjs";

prepare();
console.log("Starting the loopback Convex test server…");
const farm = await startTestServer();
console.log(`  farm at ${farm.url}, org ${farm.orgId}`);
await launchEditor(farm.url, farm.workerKeys[0]);
await feedJobs(farm.url, farm.clientKey);

async function startTestServer() {
  const capabilities = DEMO_CAPABILITIES.join(",");
  const child = spawn(process.execPath, ["--import", "tsx", "test/server/cli.ts", "--port", "0", "--seed", "1", "--capabilities", capabilities], {
    cwd: repoDir,
    stdio: ["ignore", "pipe", "inherit"],
  });
  onStop(() => child.kill("SIGTERM"));
  const firstLine = await new Promise((resolve, reject) => {
    createInterface({ input: child.stdout }).once("line", resolve);
    child.once("exit", (code) => reject(new Error(`the test server exited (code ${code}) before it was ready`)));
  });
  return JSON.parse(firstLine);
}
