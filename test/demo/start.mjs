#!/usr/bin/env node
// `npm start`: a whole farm on this machine, no account needed.
//  1. builds and packages the extension (.vsix),
//  2. starts the loopback Convex test server (the real convex/ functions) seeded with an org and a worker key,
//  3. starts code-server with the packaged extension installed and provisioned to join that farm,
//  4. keeps a demo submitter feeding demo.primes, demo.echo and recipe jobs,
// then prints the address to open. Production farms use a real Convex deployment instead (see README).
import { spawn } from "node:child_process";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { ConvexHttpClient } from "convex/browser";
import { makeFunctionReference } from "convex/server";
import { installExtension, prepareProfile, requireInstalledCodeServer, startCodeServer } from "../harness/codeServer.mjs";
import { repoDir, stateDir } from "../harness/paths.mjs";
import { onInterrupt, runNpmScript } from "../harness/process.mjs";

const RECIPE = { wordcount: { command: process.execPath, args: ["-e", WORDCOUNT_SOURCE()], description: "counts the words of payload.text" } };
const submit = makeFunctionReference("jobs:submit");
const overview = makeFunctionReference("farm:overview");
const stops = [];

requireInstalledCodeServer();
onInterrupt(stopAll);

console.log("Building and packaging the extension…");
runNpmScript("package");

console.log("Starting the loopback Convex test server…");
const farm = await startTestServer();
console.log(`  farm at ${farm.url}, org ${farm.orgId}`);

console.log("Starting code-server with the packaged extension…");
const profileDir = join(stateDir, "demo");
rmSync(profileDir, { recursive: true, force: true });
const profile = prepareProfile(profileDir, {
  "farmhand.allowRemoteDonation": true,
  "farmhand.preset": "full",
  "farmhand.recipes": RECIPE,
});
installExtension(profile, join(repoDir, "farmhand.vsix"));
const editor = await startCodeServer(profile, { env: { FARMHAND_JOIN_URL: farm.url, FARMHAND_JOIN_TOKEN: farm.workerKeys[0] } });
stops.push(editor.stop);

console.log(`
Farmhand is running.
  Open ${editor.origin}/ in a browser. The extension has joined the farm;
  click "Farmhand: off" in the status bar to start donating, then watch the Farmhand view take jobs.
  Press Ctrl-C here to stop everything.
`);
await feedJobs(farm);

async function startTestServer() {
  const child = spawn(process.execPath, ["--import", "tsx", "test/server/cli.ts", "--port", "0", "--seed", "1", "--capabilities", "recipe.wordcount"], {
    cwd: repoDir,
    stdio: ["ignore", "pipe", "inherit"],
  });
  stops.push(() => child.kill("SIGTERM"));
  const firstLine = await new Promise((resolve, reject) => {
    createInterface({ input: child.stdout }).once("line", resolve);
    child.once("exit", (code) => reject(new Error(`the test server exited (code ${code}) before it was ready`)));
  });
  return JSON.parse(firstLine);
}

/** Keep a few jobs of each kind queued, and print the farm's counts now and then. */
async function feedJobs({ url, clientKey, workerKeys }) {
  const client = new ConvexHttpClient(url);
  let round = 0;
  for (;;) {
    round++;
    const jobs = [
      { type: "demo.primes", payload: { n: 5_000_000 + Math.floor(Math.random() * 20_000_000) } },
      { type: "demo.echo", payload: { text: `hello from round ${round}` } },
      { type: "recipe.wordcount", payload: { text: "the quick brown fox jumps over the lazy dog" }, requiredCapabilities: ["recipe.wordcount"] },
    ];
    for (const job of jobs) {
      await client.mutation(submit, { clientKey, ...job }).catch((e) => console.error(`submit failed: ${e.message}`));
    }
    const stats = await client.query(overview, { apiKey: workerKeys[0] }).catch(() => undefined);
    if (stats) console.log(`[${new Date().toLocaleTimeString()}] ${JSON.stringify(stats.counts ?? stats)}`);
    await new Promise((resolve) => setTimeout(resolve, 10_000));
  }
}

async function stopAll() {
  for (const stop of stops.reverse()) await Promise.resolve(stop()).catch(() => {});
}

function WORDCOUNT_SOURCE() {
  return `let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const t=String(JSON.parse(s).text??"");console.log(JSON.stringify({progress:0.5,status:"counting"}));console.log(JSON.stringify({words:t.split(/\\s+/).filter(Boolean).length}))})`;
}
