// What both demos share: code-server with the packaged extension provisioned to join a farm, and a submitter
// that keeps a mix of jobs flowing and reports how they end.
import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { ConvexHttpClient } from "convex/browser";
import { makeFunctionReference } from "convex/server";
import { installExtension, prepareProfile, requireInstalledCodeServer, startCodeServer } from "../harness/codeServer.mjs";
import { repoDir, stateDir } from "../harness/paths.mjs";
import { onInterrupt, runNpmScript } from "../harness/process.mjs";
import { tsImport } from "tsx/esm/api";

export const DEMO_CAPABILITIES = ["demo.echo", "demo.primes", "demo.slow", "demo.sum", "recipe.wordcount", "apps"];
const WORDCOUNT = `let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const t=String(JSON.parse(s).text??"");console.log(JSON.stringify({progress:0.5,status:"counting"}));console.log(JSON.stringify({words:t.split(/\\s+/).filter(Boolean).length}))})`;
const submit = makeFunctionReference("jobs:submit");
const get = makeFunctionReference("jobs:get");
const submitBatch = makeFunctionReference("jobs:submitBatch");

const stops = [];
export const stopAll = async () => {
  for (const stop of stops.splice(0).reverse()) await Promise.resolve(stop()).catch(() => {});
};
export const onStop = (stop) => stops.push(stop);

export function prepare() {
  requireInstalledCodeServer();
  onInterrupt(stopAll);
  console.log("Building and packaging the extension…");
  runNpmScript("package");
}

/**
 * Print the demo's client key and keep it in the client key file (`~/.config/farmhand/client.json`, beside the
 * worker's key file), where the CLI and a submitter find it; a file holding another farm's key is left alone.
 */
export async function saveClientKey(farmUrl, clientKey) {
  const { readSecretFile, secretFilePath, writeSecretFile } = await tsImport("../../extension/cli/secretFiles.ts", import.meta.url);
  const path = secretFilePath("client");
  let kept;
  try {
    kept = existsSync(path) ? readSecretFile(path) : undefined;
  } catch (error) {
    kept = { url: `an unreadable file (${error.message})` };
  }
  const ours = !kept || /^http:\/\/(127\.0\.0\.1|localhost)[:/]/.test(kept.url);
  if (ours) writeSecretFile(path, { url: farmUrl, key: clientKey, name: "demo submitter" });
  console.log(`  client key (submits jobs): ${clientKey}
    ${ours ? `saved in ${path}` : `not saved: ${path} holds the key of ${kept.url}`}; or export FARMHAND_CLIENT_KEY=${clientKey}`);
}

/**
 * code-server with the packaged extension, provisioned to join `farmUrl` with `joinSecret` (token or key) and, with
 * `operatorKey`, to open the console with that operator key (kept in the editor's SecretStorage, never the engine's).
 */
export async function launchEditor(farmUrl, joinSecret, { operatorKey } = {}) {
  console.log("Starting code-server with the packaged extension…");
  const profileDir = join(stateDir, "demo");
  rmSync(profileDir, { recursive: true, force: true });
  const profile = prepareProfile(
    profileDir,
    {
      "farmhand.allowRemoteDonation": true,
      // the demo's donor has allowed farm apps (a real donor is asked once, when joining)
      "farmhand.runApps": true,
      "farmhand.recipes": { wordcount: { command: process.execPath, args: ["-e", WORDCOUNT], description: "counts the words of payload.text" } },
    },
    // The preset in one place only: the Remote tab, where code-server's machine-scoped settings live. Written in User
    // settings too, choosing another preset on the Remote tab would only remove the Remote entry and leave the User
    // one in force (the panel's policy line says where the value comes from).
    { "farmhand.preset": "full" },
  );
  installExtension(profile, join(repoDir, "farmhand.vsix"));
  const env = { FARMHAND_JOIN_URL: farmUrl, FARMHAND_JOIN_TOKEN: joinSecret, ...(operatorKey ? { FARMHAND_OPERATOR_KEY: operatorKey } : {}) };
  const editor = await startCodeServer(profile, { env });
  onStop(editor.stop);
  console.log(`
Farmhand is running.
  Open ${editor.origin}/ in a browser. The extension joins the farm at ${farmUrl} on its own;
  click "Farmhand: off" in the status bar to start donating, then watch the Farmhand view take jobs.
  This machine's editor also holds the farm's operator key: run "Farmhand: Open Console" from the command palette.
  Press Ctrl-C here to stop everything.
`);
  return editor;
}

/**
 * Submit a round of jobs every 10 s and print how the previous rounds ended. Runs until stopped. `appJob(round)`:
 * an app job to add to each round (when the demo published an app).
 */
export async function feedJobs(url, clientKey, appJob) {
  const client = new ConvexHttpClient(url);
  const open = new Map();
  for (let round = 1; ; round++) {
    const jobs = [
      { type: "demo.primes", payload: { n: 5_000_000 + Math.floor(Math.random() * 20_000_000) } },
      { type: "demo.echo", payload: { text: `hello from round ${round}` } },
      // one job to watch every third round: a minute of steps with progress, frozen while you use the machine
      // (presets light and medium), carried on afterwards or by another machine from its last step
      ...(round % 3 === 1 ? [{ type: "demo.slow", payload: { seconds: 60 } }] : []),
      { type: "recipe.wordcount", payload: { text: "the quick brown fox jumps over the lazy dog" }, requiredCapabilities: ["recipe.wordcount"] },
      ...(appJob ? [appJob(round)] : []),
    ];
    for (const job of jobs) {
      try {
        open.set(await client.mutation(submit, { clientKey, ...job }), job.type);
      } catch (error) {
        console.error(`submit failed: ${error.message}`);
      }
    }
    // every third round, a pipeline beside the single jobs: a map batch of 8 demo.echo jobs, and its reduce, a
    // demo.sum job that waits for the whole batch (dependsOn) and sums the results' n
    if (round % 3 === 2) {
      const batchId = `map-round-${round}`;
      try {
        const mapped = Array.from({ length: 8 }, (_, i) => ({ type: "demo.echo", batchId, payload: { n: i + 1, delayMs: 500 } }));
        for (const jobId of await client.mutation(submitBatch, { clientKey, jobs: mapped })) open.set(jobId, "demo.echo (map)");
        const reduce = { type: "demo.sum", payload: { field: "n" }, dependsOn: { batch: batchId } };
        open.set(await client.mutation(submit, { clientKey, ...reduce }), "demo.sum (reduce)");
      } catch (error) {
        console.error(`pipeline submit failed: ${error.message}`);
      }
    }
    const counts = {};
    for (const [jobId, type] of open) {
      const job = await client.query(get, { clientKey, jobId }).catch(() => null);
      const status = job?.status ?? "unknown";
      counts[status] = (counts[status] ?? 0) + 1;
      if (status === "succeeded") console.log(`  ${job.app ? `${type} v${job.app.version}` : type} ${jobId} → ${summary(job.result)}`);
      if (["succeeded", "dead", "canceled"].includes(status)) open.delete(jobId);
    }
    console.log(`[${new Date().toLocaleTimeString()}] waiting jobs: ${JSON.stringify(counts)}`);
    await new Promise((resolve) => setTimeout(resolve, 10_000));
  }
}

/** A result short enough for one line (an app's PNG is shown by its size). */
function summary(result) {
  const text = JSON.stringify(result, (key, value) => (key === "png" && typeof value === "string" ? `<${Math.round((value.length * 3) / 4)} bytes of PNG>` : value));
  return text.length > 160 ? `${text.slice(0, 157)}…` : text;
}
