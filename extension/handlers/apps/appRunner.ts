import { HandlerError, messageOf } from "../../worker/errors";
import type { PoolRunContext, ProcessPool } from "../processPool";
import { checkAppPin, type AppPin } from "./appPin";
import type { ModuleCache } from "./moduleCache";
import type { AppImplOptions } from "./runApp";

/** One app job as the engine will hand it over: the pinned version, the job's payload, the checkpoint kept for it. */
export type AppRunRequest = { app: AppPin; payload: unknown; checkpoint?: string; inputs?: unknown[] };

/** What an app run produced: the result, the CPU time it used (when measurable) and its latest checkpoint. */
export type AppRunOutcome = { result: unknown; cpuMs?: number; checkpoint?: string };

/** Fetches the bytes of a pinned version (e.g. `httpModuleSource` over the deployment's module route). */
export type ModuleSource = (app: AppPin) => Promise<Uint8Array>;

/**
 * Runs app jobs: the module comes through the cache (fetched once per sha256, checked against it), then runs in
 * the pool's warm, lowest-priority handler processes under the `app` built-in. `ctx.onCheckpoint` hears each
 * checkpoint as the app prints it (the engine uploads it); `ctx.onCpuMs` hears the CPU time, on success and
 * failure alike. A failure throws a HandlerError whose `retryable` says whether another attempt may help.
 */
export class AppRunner {
  constructor(
    private readonly pool: ProcessPool,
    private readonly cache: ModuleCache,
    private readonly source: ModuleSource,
  ) {}

  async run(request: AppRunRequest, ctx: PoolRunContext): Promise<AppRunOutcome> {
    const app = checkAppPin(request.app);
    if (ctx.signal.aborted) throw ctx.signal.reason;
    const module = await this.cache.acquire(app.sha256, () => this.source(app));
    let checkpoint = request.checkpoint;
    let cpuMs: number | undefined;
    try {
      const options: AppImplOptions = { ...app, modulePath: module.path, ...(request.inputs ? { inputs: request.inputs } : {}) };
      const result = await this.pool.run({ builtin: "app", options }, request.payload, {
        ...ctx,
        checkpoint: request.checkpoint,
        onCheckpoint: (data) => {
          // A checkpoint that races in after the cancel is not the job's any more (its lease is being given up).
          if (ctx.signal.aborted) return;
          checkpoint = data;
          ctx.onCheckpoint?.(data);
        },
        onCpuMs: (ms) => {
          cpuMs = ms;
          ctx.onCpuMs?.(ms);
        },
      });
      return { result, cpuMs, checkpoint };
    } catch (e) {
      if (e instanceof HandlerError || ctx.signal.aborted) throw e;
      throw new HandlerError(`app "${app.name}" v${app.version}: ${messageOf(e)}`);
    } finally {
      module.release();
    }
  }
}
