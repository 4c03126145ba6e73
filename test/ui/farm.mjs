// The UI test's side of the test farm: a submitter with the client key (Convex's HTTP API), and the Farmhand log.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { ConvexHttpClient } from "convex/browser";
import { anyApi } from "convex/server";

/** Submits a demo.primes job (count the primes below n) with the farm's client key; returns its id. */
export async function submitPrimes(farm, n) {
  return await new ConvexHttpClient(farm.url).mutation(anyApi.jobs.submit, { clientKey: farm.clientKey, type: "demo.primes", payload: { n } });
}

/** Enrolls a machine of its own with an enrollment token; returns `{ apiKey }`. */
export async function enrollWorker(farm, token, name) {
  return await new ConvexHttpClient(farm.url).mutation(anyApi.workers.enroll, { token, name, machineId: name, capabilities: ["demo.primes"] });
}

/** The machine with this key leaves the farm: the farm revokes the key (as an operator's revoke does). */
export async function leaveFarm(farm, apiKey) {
  return await new ConvexHttpClient(farm.url).mutation(anyApi.workers.leave, { apiKey });
}

export async function cancelJob(farm, jobId) {
  return await new ConvexHttpClient(farm.url).mutation(anyApi.jobs.cancel, { clientKey: farm.clientKey, jobId });
}

export async function getJob(farm, jobId) {
  return await new ConvexHttpClient(farm.url).query(anyApi.jobs.get, { clientKey: farm.clientKey, jobId });
}

/** The text of every Farmhand.log (the extension's LogOutputChannel) under the profile's logs folder. */
export function farmhandLog(userDataDir) {
  const texts = [];
  const visit = (path) => {
    const stat = statSync(path, { throwIfNoEntry: false });
    if (stat?.isDirectory()) for (const name of readdirSync(path)) visit(join(path, name));
    else if (stat?.isFile() && path.endsWith("Farmhand.log")) texts.push(readFileSync(path, "utf8"));
  };
  visit(join(userDataDir, "logs"));
  return texts.join("\n");
}
