// The farm the code-server runners hand to the extension under test: the project's loopback Convex test server
// (test/server, the real convex/ functions through convex-test), seeded with one org, a client key, one enrolled
// worker, a client key that may publish apps, an operator key, and enrollment tokens for the join tests. Prints ONE JSON line on stdout, then runs until SIGTERM.
// Arguments: extra capabilities to grant on top of demo.echo, demo.primes and demo.slow.
import { makeFunctionReference } from "convex/server";
import { seed, startTestServer } from "../server";

const createEnrollment = makeFunctionReference<"mutation", Record<string, unknown>, { token: string }>("admin:createEnrollment");
const CAPABILITIES = [...new Set(["demo.echo", "demo.primes", "demo.slow", ...process.argv.slice(2)])];

async function main(): Promise<void> {
  // stdout carries only the JSON line; what the functions log goes to stderr.
  console.log = console.error;
  console.info = console.error;
  console.debug = console.error;
  const server = await startTestServer();
  const stop = () => void server.close().finally(() => process.exit(0));
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);

  // the seed's operator key is the console's (the demo provisions it into its editor)
  const { orgId, clientKey, publishKey, operatorKey, workerKeys } = await seed(server, 1, { capabilities: CAPABILITIES });
  const enrollment = (options: Record<string, unknown>) =>
    server.write(async (t) => (await t.mutation(createEnrollment, { orgId, capabilities: CAPABILITIES, ...options })).token);
  const tokens = {
    // Two jobs at once: the benchmark measures the host with two demo.primes jobs running.
    join: await enrollment({ maxConcurrentJobs: 2 }),
    // Eight jobs at once: the benchmark of the host's CPU while jobs stream progress.
    wide: await enrollment({ maxConcurrentJobs: 8 }),
    // Expired one millisecond after it was made.
    expired: await enrollment({ ttlMs: 1 }),
    // An operator's machine: may manage the farm (the console's UI test joins with it).
    operator: await enrollment({ maxConcurrentJobs: 2, canManage: true }),
    // A machine of its own for the host test of Leave Farm (which revokes the key it joined with).
    leave: await enrollment({ maxConcurrentJobs: 2 }),
  };
  process.stdout.write(JSON.stringify({ url: server.url, orgId, clientKey, publishKey, workerKeys, tokens, operatorKey }) + "\n");
}

main().catch((error: Error) => {
  process.stderr.write(`test farm: ${error.stack ?? error.message}\n`);
  process.exit(1);
});
