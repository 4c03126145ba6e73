// seed(): an org, a client key, a publishing client key, an operator key and n enrolled workers, made with the project's own
// admin and worker functions (admin:createOrg, admin:createClientKey, admin:createOperatorKey, admin:createEnrollment,
// workers:enroll).
import { api, internal } from "../../convex/_generated/api";
import type { Id } from "../../convex/_generated/dataModel";
import type { AnySchema } from "./modules";
import type { TestServer } from "./server";

const defaultCapabilities = ["demo.echo", "demo.primes"];
/**
 * Also granted (not advertised): a job's type routes it, so the tests' own job types (test.* fixtures, recipes a
 * test declares) need the farm's leave; each worker still gets only the types its handlers offer.
 */
const extraGrants = ["test.*", "recipe.*"];

export type SeedOptions = {
  /** Granted and advertised by every seeded worker, on top of demo.echo and demo.primes. */
  capabilities?: string[];
  maxConcurrentJobs?: number;
  orgName?: string;
};

/**
 * `publishKey`: a client key of the same org with the right to publish farm apps (`clientKey` has none); `operatorKey`:
 * an operator key of the org (the console, GET /api/metrics).
 */
export type Seeded = { orgId: Id<"orgs">; clientKey: string; publishKey: string; operatorKey: string; workerKeys: string[]; workerIds: Array<Id<"workers">> };

export async function seed<Schema extends AnySchema>(server: Pick<TestServer<Schema>, "write">, workers: number, options: SeedOptions = {}): Promise<Seeded> {
  if (!Number.isInteger(workers) || workers < 0) throw new Error(`seed: the worker count must be a whole number ≥ 0, got ${workers}`);
  const capabilities = [...new Set([...defaultCapabilities, ...(options.capabilities ?? [])])];
  return await server.write(async (t) => {
    const orgId = await t.mutation(internal.admin.createOrg, { name: options.orgName ?? "Test farm" });
    const { key: clientKey } = await t.mutation(internal.admin.createClientKey, { orgId, name: "test client" });
    const { key: publishKey } = await t.mutation(internal.admin.createClientKey, { orgId, name: "test publisher", canPublish: true });
    const { key: operatorKey } = await t.mutation(internal.admin.createOperatorKey, { orgId, name: "test operator" });
    const workerKeys: string[] = [];
    const workerIds: Array<Id<"workers">> = [];
    for (let i = 0; i < workers; i++) {
      const { token } = await t.mutation(internal.admin.createEnrollment, {
        orgId,
        capabilities: [...capabilities, ...extraGrants],
        ...(options.maxConcurrentJobs ? { maxConcurrentJobs: options.maxConcurrentJobs } : {}),
      });
      const enrolled = await t.mutation(api.workers.enroll, {
        token,
        name: `test-worker-${i + 1}`,
        machineId: `test-machine-${i + 1}`,
        capabilities,
      });
      workerKeys.push(enrolled.apiKey);
      workerIds.push(enrolled.workerId);
    }
    return { orgId, clientKey, publishKey, operatorKey, workerKeys, workerIds };
  });
}
