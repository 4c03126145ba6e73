#!/usr/bin/env node
// `npm start`: a whole farm on this machine, no account needed.
//  1. builds and packages the extension (.vsix),
//  2. starts the loopback Convex test server (the real convex/ functions through convex-test) seeded with an org,
//  3. starts code-server with the packaged extension installed and provisioned to join that farm with an
//     operator's token (so the console opens too),
//  4. builds the example apps and publishes the Mandelbrot renderer (farmhand-worker publish),
//  5. keeps a demo submitter feeding demo.primes, demo.echo, recipe and app.mandelbrot jobs.
// Production farms run on a real Convex deployment: `npm run start:convex`.
import { startTestFarm } from "../harness/testFarm.mjs";
import { DEMO_CAPABILITIES, feedJobs, launchEditor, onStop, prepare } from "./demo.mjs";
import { demoAppJob, publishDemoApp } from "./demoApp.mjs";

prepare();
console.log("Starting the loopback Convex test server…");
const farm = await startTestFarm({ capabilities: DEMO_CAPABILITIES });
onStop(farm.stop);
console.log(`  farm at ${farm.url}`);
const app = await publishDemoApp(farm.url, farm.publishKey);
// The demo's machine is also the farm's operator: Farmhand: Open Console shows the whole farm.
await launchEditor(farm.url, farm.tokens.operator);
await feedJobs(farm.url, farm.clientKey, app ? demoAppJob : undefined);
