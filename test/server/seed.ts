// seed(): an org, a client key, a publishing client key and n enrolled workers, made with the project's own admin and worker
// functions (admin:createOrg, admin:createClientKey, admin:createEnrollment, workers:enroll).
import { makeFunctionReference } from "convex/server";
import type { TestServer } from "./server";

export const defaultCapabilities = ["demo.echo", "demo.primes"];

export type SeedOptions = {
  /** Granted and advertised by every seeded worker, on top of demo.echo and demo.primes. */
  capabilities?: string[];
  maxConcurrentJobs?: number;
  orgName?: string;
};

/** `publishKey`: a client key of the same org with the right to publish farm apps (`clientKey` has none). */
export type Seeded = { orgId: string; clientKey: string; publishKey: string; workerKeys: string[]; workerIds: string[] };

const ref = (name: string) => makeFunctionReference<any>(name);

/** Admin functions answer either a bare secret or an object holding it; accept both. */
function secretFrom(answer: unknown, field: string): string {
  if (typeof answer === "string") return answer;
  const value = (answer as Record<string, unknown> | null)?.[field];
  if (typeof value !== "string") throw new Error(`Expected a ${field} from the admin function, got ${JSON.stringify(answer)}`);
  return value;
}

export async function seed(server: Pick<TestServer, "write">, workers: number, options: SeedOptions = {}): Promise<Seeded> {
  if (!Number.isInteger(workers) || workers < 0) throw new Error(`seed: the worker count must be a whole number ≥ 0, got ${workers}`);
  const capabilities = [...new Set([...defaultCapabilities, ...(options.capabilities ?? [])])];
  return await server.write(async (t) => {
    const orgId = (await t.mutation(ref("admin:createOrg"), { name: options.orgName ?? "Test farm" })) as string;
    const clientKey = secretFrom(await t.mutation(ref("admin:createClientKey"), { orgId, name: "test client" }), "key");
    const publishKey = secretFrom(await t.mutation(ref("admin:createClientKey"), { orgId, name: "test publisher", canPublish: true }), "key");
    const workerKeys: string[] = [];
    const workerIds: string[] = [];
    for (let i = 0; i < workers; i++) {
      const enrollment = await t.mutation(ref("admin:createEnrollment"), {
        orgId,
        capabilities,
        ...(options.maxConcurrentJobs ? { maxConcurrentJobs: options.maxConcurrentJobs } : {}),
      });
      const enrolled = (await t.mutation(ref("workers:enroll"), {
        token: secretFrom(enrollment, "token"),
        name: `test-worker-${i + 1}`,
        machineId: `test-machine-${i + 1}`,
        capabilities,
      })) as { workerId: string; apiKey: string };
      workerKeys.push(enrolled.apiKey);
      workerIds.push(enrolled.workerId);
    }
    return { orgId, clientKey, publishKey, workerKeys, workerIds };
  });
}
