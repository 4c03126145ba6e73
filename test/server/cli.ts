// `npm run testserver -- --port P --seed N [--capabilities a,b] [--dir convexFolder] [--conflict-window-ms N] [--stock-scan]`
// Starts the loopback test server, prints ONE JSON line {"url","orgId","clientKey","publishKey","operatorKey","workerKeys"} on stdout
// and runs until SIGINT or SIGTERM. Without --seed it prints {"url"} only.
import { parseCliArgs, usage, type CliOptions } from "./cliArgs";
import { seed } from "./seed";
import { startTestServer } from "./server";

async function main(): Promise<void> {
  // stdout carries only the JSON line; what functions log goes to stderr.
  console.log = console.error;
  console.info = console.error;
  console.debug = console.error;
  let options: CliOptions;
  try {
    options = parseCliArgs(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`testserver: ${(error as Error).message}\n${usage}\n`);
    process.exit(2);
  }
  const server = await startTestServer({
    port: options.port,
    convexDir: options.dir,
    conflictWindowMs: options.conflictWindowMs,
    tableScan: !options.stockScan,
  });
  const stop = () => {
    void server.close().finally(() => process.exit(0));
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  if (options.seed === undefined) {
    process.stdout.write(JSON.stringify({ url: server.url }) + "\n");
    return;
  }
  const seeded = await seed(server, options.seed, { capabilities: options.capabilities });
  const { orgId, clientKey, publishKey, operatorKey, workerKeys } = seeded;
  process.stdout.write(JSON.stringify({ url: server.url, orgId, clientKey, publishKey, operatorKey, workerKeys }) + "\n");
}

main().catch((error: Error) => {
  process.stderr.write(`testserver: ${error.message}\n`);
  process.exit(1);
});
