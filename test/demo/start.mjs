#!/usr/bin/env node
// `npm start`: a whole farm on this machine, no account needed.
//  1. builds and packages the extension (.vsix),
//  2. starts the loopback Convex test server (the real convex/ functions through convex-test) seeded with an org,
//  3. prints the client key (and saves it in ~/.config/farmhand/client.json), then starts code-server with the
//     packaged extension installed and provisioned to join that farm as a donor, with an operator key for the console,
//  4. builds the example apps and publishes the Mandelbrot renderer (farmhand-worker publish),
//  5. keeps a demo submitter feeding demo.primes, demo.echo, recipe and app.mandelbrot jobs.
// Production farms run on a real Convex deployment: `npm run start:convex`.
import { startTestFarm } from "../harness/testFarm.mjs";
import { DEMO_CAPABILITIES, feedJobs, launchEditor, onStop, prepare, saveClientKey } from "./demo.mjs";
import { demoAppJob, publishDemoApp } from "./demoApp.mjs";

prepare();
console.log("Starting the loopback Convex test server…");
const farm = await startTestFarm({ capabilities: DEMO_CAPABILITIES });
onStop(farm.stop);
console.log(`  farm at ${farm.url}`);
const app = await publishDemoApp(farm.url, farm.publishKey);
await saveClientKey(farm.url, farm.clientKey);
// The demo's machine joins as a donor and holds the farm's operator key too: Farmhand: Open Console shows the
// whole farm, with a key the engine never sees.
await launchEditor(farm.url, farm.tokens.join, { operatorKey: farm.operatorKey });
await feedJobs(farm.url, farm.clientKey, app ? demoAppJob : undefined);
