import { ConvexClient } from "convex/browser";
import { createBuiltinRegistry } from "../../extension/handlers";
import { convexFarmClient } from "../../extension/worker/farmClient";
import type { Handler, HandlerSource } from "../../extension/worker/handler";
import { Worker } from "../../extension/worker/worker";

export function newClient(url: string): ConvexClient {
  return new ConvexClient(url, { logger: false, skipConvexDeploymentUrlCheck: true, unsavedChangesWarning: false });
}

/** demo.echo in the engine's own process: the lightweight engines for big farms. */
const inProcessEcho: Handler = { type: "demo.echo", run: (payload) => Promise.resolve(payload ?? null) };

function inProcess(...handlers: Handler[]): HandlerSource {
  return { get: (type) => handlers.find((h) => h.type === type), capabilities: () => Promise.resolve(handlers.map((h) => h.type)) };
}

export type Engine = { worker: Worker; client: ConvexClient; close: () => Promise<void> };

/**
 * A farmhand engine (the real Worker over a real ConvexClient). `real`: the built-in handlers in child
 * processes, as a donor runs them; otherwise demo.echo in-process (hundreds of engines in one process).
 */
export function engine(url: string, apiKey: string, options: { real: boolean; concurrency?: number }): Engine {
  const client = newClient(url);
  let closePool = () => undefined as void;
  let handlers: HandlerSource;
  if (options.real) {
    const { registry, pool } = createBuiltinRegistry({ ollama: false, pool: { maxIdle: 1 } });
    handlers = registry;
    closePool = () => pool.close();
  } else {
    handlers = inProcess(inProcessEcho);
  }
  const worker = new Worker({
    client: convexFarmClient(client, apiKey),
    handlers,
    concurrency: options.concurrency ?? 1,
    onlyCapabilities: ["demo.echo"],
  });
  return {
    worker,
    client,
    close: async () => {
      await worker.stop();
      closePool();
      await client.close();
    },
  };
}
