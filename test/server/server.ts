// startTestServer(): a loopback stand-in for a local Convex deployment, for tests, demos and benchmarks.
// Real ConvexClients connect to `url`; the app's functions run in convex-test. Production uses a real
// Convex deployment; this is a test fixture.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { SchemaDefinition } from "convex/server";
import { convexTest, type TestConvex } from "convex-test";
import { WebSocketServer } from "ws";
import { CallQueue } from "./callQueue";
import { Connection } from "./connection";
import { CronRunner } from "./cronRunner";
import { FunctionRunner } from "./functions";
import { HttpBridge } from "./httpBridge";
import { modulesFromDirectory, schemaFromDirectory, type ModuleMap } from "./modules";
import { ScheduledWatcher } from "./scheduledWatcher";
import { seed, type SeedOptions, type Seeded } from "./seed";
import { SyncHub } from "./syncHub";

export const projectConvexDir = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "convex");
export const fixtureConvexDir = join(dirname(fileURLToPath(import.meta.url)), "fixture", "convex");

export type TestServerOptions = {
  /** 0 (the default) picks a free port. */
  port?: number;
  host?: string;
  /** Folder of the Convex app to serve; defaults to the project's convex/. */
  convexDir?: string;
  /** convex-test modules map; built from convexDir when missing. */
  modules?: ModuleMap;
  /** Schema; read from convexDir/schema.ts when missing. */
  schema?: SchemaDefinition<any, boolean>;
  /** Enforce Convex's per-transaction read/write limits, as a deployment does (default true). */
  transactionLimits?: boolean;
  /** Run the interval crons of crons.ts on real timers (default true). */
  crons?: boolean;
};

export type TestServer = {
  url: string;
  port: number;
  t: TestConvex<any>;
  /** Runs a function or inline code against the data, then pushes what changed to subscribers. */
  write<T>(call: (t: TestConvex<any>) => Promise<T>): Promise<T>;
  /** An org, a client key and `workers` enrolled workers (needs the project's admin functions). */
  seed(workers: number, options?: SeedOptions): Promise<Seeded>;
  /** Closes every client socket and refuses new ones for `ms`; resolves when accepting again. */
  dropConnections(ms: number): Promise<void>;
  connectionCount(): number;
  close(): Promise<void>;
};

const syncPath = /^\/api\/[^/]+\/sync$/;

export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const convexDir = options.convexDir ?? projectConvexDir;
  const modules = options.modules ?? modulesFromDirectory(convexDir);
  const schema = options.schema ?? (await schemaFromDirectory(convexDir));
  const t = convexTest({ schema, modules, transactionLimits: options.transactionLimits ?? true }) as TestConvex<any>;

  const queue = new CallQueue();
  const runner = new FunctionRunner(t, modules);
  const watcher = new ScheduledWatcher(t, () => hub.markDirty());
  const hub: SyncHub = new SyncHub(runner, queue, () => watcher.scan());
  const http = new HttpBridge(t, runner, hub);
  const crons = new CronRunner(runner, (call) => {
    hub.callAndRefresh(call).catch((error: Error) => console.error(`Cron failed: ${error.message}`));
  });
  if (options.crons ?? true) await crons.start();

  let refuseUntil = 0;
  const outages = new Map<NodeJS.Timeout, () => void>();
  const refusing = () => Date.now() < refuseUntil;

  const webSockets = new WebSocketServer({ noServer: true });
  const server: Server = createServer((request, response) => {
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
  // Scheduled functions left over from seeding data before any client connects.
  await queue.run(() => watcher.scan());

  const write: TestServer["write"] = (call) => hub.callAndRefresh(() => call(t));
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    t,
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
    async close() {
      watcher.close();
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
