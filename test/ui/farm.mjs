// The UI test's side of the test farm: a submitter with the client key (Convex's HTTP API), and the Farmhand log.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { ConvexHttpClient } from "convex/browser";
import { anyApi } from "convex/server";

/** Submits a demo.primes job (count the primes below n) with the farm's client key; returns its id. */
export async function submitPrimes(farm, n) {
  return await new ConvexHttpClient(farm.url).mutation(anyApi.jobs.submit, { clientKey: farm.clientKey, type: "demo.primes", payload: { n } });
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
