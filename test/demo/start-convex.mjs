#!/usr/bin/env node
// `npm run start:convex`: the same demo as `npm start`, against a real Convex deployment (needs internet and a
// Convex account). Pushes convex/ with `npx convex dev --once`, creates an org, an enrollment token and a client
// key with `npx convex run`, then starts code-server provisioned with the token and the demo submitter.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { repoDir } from "../harness/paths.mjs";
import { DEMO_CAPABILITIES, feedJobs, launchEditor, prepare, saveClientKey } from "./demo.mjs";
import { demoAppJob, publishDemoApp } from "./demoApp.mjs";

prepare();
console.log("Pushing convex/ to your Convex development deployment (npx convex dev --once)…");
try {
  execFileSync("npx", ["convex", "dev", "--once"], { cwd: repoDir, stdio: "inherit" });
} catch {
  console.error(`
Could not push to Convex. This needs internet access and a Convex account: run \`npx convex dev\` once by hand to
log in and pick a project, then run \`npm run start:convex\` again. Without internet, \`npm start\` runs the same
demo on the loopback test server.`);
  process.exit(1);
}
const url = deploymentUrl();
const orgId = convexRun("admin:createOrg", { name: `farmhand demo ${new Date().toISOString()}` });
const { token } = convexRun("admin:createEnrollment", { orgId, capabilities: DEMO_CAPABILITIES, maxConcurrentJobs: 2 });
const { key: operatorKey } = convexRun("admin:createOperatorKey", { orgId, name: "demo operator" });
const { key: clientKey } = convexRun("admin:createClientKey", { orgId, name: "demo submitter" });
const { key: publishKey } = convexRun("admin:createClientKey", { orgId, name: "demo publisher", canPublish: true });
console.log(`  farm at ${url}, org ${orgId}`);
const app = await publishDemoApp(url, publishKey);
await saveClientKey(url, clientKey);
await launchEditor(url, token, { operatorKey });
await feedJobs(url, clientKey, app ? demoAppJob : undefined);

function deploymentUrl() {
  const env = join(repoDir, ".env.local");
  const line = existsSync(env) && readFileSync(env, "utf8").split("\n").find((l) => l.startsWith("CONVEX_URL="));
  if (!line) throw new Error("npx convex dev did not write CONVEX_URL to .env.local");
  return line.slice("CONVEX_URL=".length).trim().replace(/^["']|["']$/g, "");
}

function convexRun(name, args) {
  const out = execFileSync("npx", ["convex", "run", name, JSON.stringify(args)], { cwd: repoDir, encoding: "utf8" });
  return JSON.parse(out.trim());
}
