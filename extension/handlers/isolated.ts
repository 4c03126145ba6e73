import type { Handler } from "../worker/handler";
import type { ProcessPool } from "./processPool";
import type { ImplSpec } from "./protocol";

export type IsolatedHandlerSpec = {
  type: string;
  impl: ImplSpec;
  capabilities?: () => string[] | Promise<string[]>;
  timeoutMs?: number;
  /** False for job code whose work happens in another program (Ollama): freezing this process would not stop it. */
  freezable?: boolean;
};

/** A handler whose job code runs in the pool's child processes, never on the host's thread. */
export function isolatedHandler(pool: ProcessPool, spec: IsolatedHandlerSpec): Handler {
  return {
    type: spec.type,
    timeoutMs: spec.timeoutMs,
    capabilities: spec.capabilities,
    // checkpoints the job code saves go to the engine, which keeps the latest on the server
    run: (payload, ctx) => {
      const withCheckpoints = { ...ctx, onCheckpoint: ctx.saveCheckpoint };
      return pool.run(spec.impl, payload, spec.freezable === false ? { ...withCheckpoints, setFreezer: undefined } : withCheckpoints);
    },
  };
}
