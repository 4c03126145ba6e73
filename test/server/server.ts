// startTestServer(): a loopback stand-in for a local Convex deployment, for tests, demos and benchmarks.
// Real ConvexClients connect to `url`; the app's functions run in convex-test. Production uses a real
// Convex deployment; this is a test fixture.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { TestConvex } from "convex-test";
import { WebSocketServer } from "ws";
import { CallQueue } from "./callQueue";
import { Connection } from "./connection";
import { CronRunner } from "./cronRunner";
import { FunctionRunner } from "./functions";
import { HttpBridge } from "./httpBridge";
import { Origin } from "./instruments/executions";
import { IndexCatalog } from "./instruments/indexCatalog";
import { instrumentModules } from "./instruments/instrumentModules";
import { Instruments } from "./instruments/instruments";
import { instrumentTestConvex } from "./instruments/instrumentTestConvex";
import type { ServerStats } from "./instruments/stats";
import { ensureSyscallRecorder } from "./instruments/syscallRecorder";
import { modulesFromDirectory, schemaFromDirectory, type AnySchema, type ModuleMap } from "./modules";
import type projectSchema from "../../convex/schema";
import type fixtureSchema from "./fixture/convex/schema";
import { seed, type SeedOptions, type Seeded } from "./seed";
import { answerStatsRequest } from "./statsEndpoint";
import { SyncHub } from "./syncHub";
import { loadConvexTest } from "./tableScan";

const projectConvexDir = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "convex");
export const fixtureConvexDir = join(dirname(fileURLToPath(import.meta.url)), "fixture", "convex");
/** The schema of the project's convex/ (served by default) and of the fixture app, for typed data access. */
export type ProjectSchema = typeof projectSchema;
export type FixtureSchema = typeof fixtureSchema;

export type TestServerOptions = {
  /** 0 (the default) picks a free port. */
  port?: number;
  host?: string;
  /** Folder of the Convex app to serve; defaults to the project's convex/. */
  convexDir?: string;
  /** convex-test modules map; built from convexDir when missing. */
  modules?: ModuleMap;
  /** Schema; read from convexDir/schema.ts when missing. */
  schema?: AnySchema;
  /** Enforce Convex's per-transaction read/write limits, as a deployment does (default true). */
  transactionLimits?: boolean;
  /** Run the interval crons of crons.ts on real timers (default true). */
  crons?: boolean;
  /**
   * The conflict audit counts a mutation as a would-be OCC conflict when a write committed this many ms
   * before it ran, by a caller it had not heard from yet, falls into its read set (default 20).
   */
  conflictWindowMs?: number;
  /**
   * Queries iterate only their own table (default true; tableScan.ts). false runs stock convex-test, whose every
   * query walks every stored document: the same answers, slower in proportion to the whole database.
   */
  tableScan?: boolean;
  /**
   * Sets FARMHAND_WEBHOOK_ALLOW_PRIVATE=1 in this process (where the functions run) unless it is set already, so
   * webhooks may go to local receivers as on a self-hosted farm (default true; false leaves the env alone).
   */
  allowPrivateWebhooks?: boolean;
};

const defaultConflictWindowMs = 20;

/** `Schema` is the schema of the folder served: the project's unless the server was given another folder. */
export type TestServer<Schema extends AnySchema = ProjectSchema> = {
  url: string;
  port: number;
  t: TestConvex<Schema>;
  /** Runs a function or inline code against the data, then pushes what changed to subscribers. */
  write<T>(call: (t: TestConvex<Schema>) => Promise<T>): Promise<T>;
  /** An org, a client key and `workers` enrolled workers (needs the project's admin functions). */
  seed(workers: number, options?: SeedOptions): Promise<Seeded>;
  /** Closes every client socket and refuses new ones for `ms`; resolves when accepting again. */
  dropConnections(ms: number): Promise<void>;
  connectionCount(): number;
  /** What GET /__testserver/stats answers: calls, would-be conflicts and pushes per function since the last reset. */
  stats(): ServerStats;
  /** Zeroes the stats (as POST /__testserver/stats/reset does) and returns the zeroed stats. */
  resetStats(): ServerStats;
  close(): Promise<void>;
};

const syncPath = /^\/api\/[^/]+\/sync$/;

/** Name the served folder's schema as `Schema` (the project's by default) to read its data with its types. */
export async function startTestServer<Schema extends AnySchema = ProjectSchema>(options: TestServerOptions = {}): Promise<TestServer<Schema>> {
  const conflictWindowMs = options.conflictWindowMs ?? defaultConflictWindowMs;
  if (!Number.isFinite(conflictWindowMs) || conflictWindowMs < 0) {
    throw new Error(`conflictWindowMs needs a number of ms ≥ 0, got ${conflictWindowMs}`);
  }
  if (options.allowPrivateWebhooks ?? true) process.env.FARMHAND_WEBHOOK_ALLOW_PRIVATE ??= "1";
  const convexDir = options.convexDir ?? projectConvexDir;
  const appModules = options.modules ?? modulesFromDirectory(convexDir);
  const schema = options.schema ?? (await schemaFromDirectory(convexDir));
  const transactionLimits = options.transactionLimits ?? true;
  const instruments = new Instruments({ catalog: IndexCatalog.fromSchema(schema), conflictWindowMs, limitsEnforced: transactionLimits });
  const modules = instrumentModules(appModules, instruments);
  const { convexTest } = options.tableScan === false ? await import("convex-test") : await loadConvexTest();
  const rawT = convexTest({ schema, modules, transactionLimits });
  ensureSyscallRecorder();
  const t = instrumentTestConvex(rawT, instruments);

  const queue = new CallQueue();
  const runner = new FunctionRunner(rawT, modules, instruments);
  const hub = new SyncHub(runner, queue, instruments);
  const http = new HttpBridge(t, runner, hub, instruments);
  const crons = new CronRunner(
    runner,
    (call) => {
      hub.callAndRefresh(call).catch((error: Error) => console.error(`Cron failed: ${error.message}`));
    },
    instruments,
  );
  if (options.crons ?? true) await crons.start();

  let refuseUntil = 0;
  const outages = new Map<NodeJS.Timeout, () => void>();
  const refusing = () => Date.now() < refuseUntil;

  const webSockets = new WebSocketServer({ noServer: true });
  const server: Server = createServer((request, response) => {
    // The instruments answer even while connections are refused: they are not part of the deployment.
    if (answerStatsRequest(request, response, instruments.stats)) return;
    if (refusing()) {
      response.writeHead(503, { "content-type": "text/plain" }).end("Test server is refusing connections");
      return;
    }
    void http.handle(request, response);
  });
  server.on("upgrade", (request, socket, head) => {
    const path = new URL(request.url ?? "/", "http://loopback").pathname;
    if (refusing() || !syncPath.test(path)) {
      socket.end(refusing() ? "HTTP/1.1 503 Service Unavailable\r\n\r\n" : "HTTP/1.1 404 Not Found\r\n\r\n");
      socket.destroy();
      return;
    }
    webSockets.handleUpgrade(request, socket, head, (ws) => hub.attach(new Connection(ws)));
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", (error) => {
      crons.close();
      reject(error);
    });
    server.listen(options.port ?? 0, options.host ?? "127.0.0.1", () => resolve());
  });
  const port = (server.address() as AddressInfo).port;

  // Direct writes stand in for an operator's `npx convex run`: counted, by a caller that has seen nothing.
  // Loaded from the folder at run time: its schema is the one the caller names.
  const typedT = t as unknown as TestConvex<Schema>;
  const write: TestServer<Schema>["write"] = (call) => hub.callAndRefresh(() => instruments.within(new Origin("test", 0), () => call(typedT)));
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    t: typedT,
    write,
    seed: (workers, seedOptions) => seed({ write }, workers, seedOptions),
    dropConnections(ms: number) {
      if (!Number.isFinite(ms) || ms < 0) throw new Error(`dropConnections needs a duration in ms ≥ 0, got ${ms}`);
      refuseUntil = Math.max(refuseUntil, Date.now() + ms);
      hub.closeAll(1001, "InternalServerError: the test server dropped every connection");
      return new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          outages.delete(timer);
          resolve();
        }, ms);
        outages.set(timer, resolve);
      });
    },
    connectionCount: () => hub.connections.size,
    stats: () => instruments.stats.snapshot(),
    resetStats: () => instruments.stats.reset(),
    async close() {
      instruments.close();
      crons.close();
      for (const [timer, resolve] of outages) {
        clearTimeout(timer);
        resolve();
      }
      outages.clear();
      hub.closeAll(1001, "Test server closing");
      for (const client of webSockets.clients) client.terminate();
      webSockets.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await queue.idle();
    },
  };
}
