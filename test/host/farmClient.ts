// The submitter's side of the test farm, from inside the extension host: the client key over Convex's HTTP API.
import { ConvexHttpClient } from "convex/browser";
import { anyApi } from "convex/server";
import { testFarm } from "./farmhand";

export type JobView = { jobId: string; status: string; progress?: number; result?: unknown; error?: string; suspendedSince?: number };

function client(): ConvexHttpClient {
  return new ConvexHttpClient(testFarm().url);
}

/** Submits a demo.primes job (count the primes below n); returns its id. */
export async function submitPrimes(n: number): Promise<string> {
  return submitJob("demo.primes", { n });
}

/** Submits a job of any type the test farm grants (`extra`: more fields of its spec); returns its id. */
export async function submitJob(type: string, payload: unknown, extra: Record<string, unknown> = {}): Promise<string> {
  return (await client().mutation(anyApi.jobs.submit, { clientKey: testFarm().clientKey, type, payload, ...extra })) as string;
}

export async function cancelJob(jobId: string): Promise<void> {
  await client().mutation(anyApi.jobs.cancel, { clientKey: testFarm().clientKey, jobId });
}

export async function getJob(jobId: string): Promise<JobView> {
  const job = (await client().query(anyApi.jobs.get, { clientKey: testFarm().clientKey, jobId })) as JobView | null;
  if (!job) throw new Error(`the farm does not know job ${jobId}`);
  return job;
}
