import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AppPin } from "../../../extension/handlers/apps/appPin";
import { AppRunner } from "../../../extension/handlers/apps/appRunner";
import { ModuleCache } from "../../../extension/handlers/apps/moduleCache";
import { ProcessPool } from "../../../extension/handlers/processPool";
import { fakeCtx } from "../handlers/fakeCtx";

export function sha256(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** A pin for these bytes (limits small enough for tests unless given). */
function pinFor(bytes: Uint8Array, options: Partial<AppPin> = {}): AppPin {
  return { name: "test-app", version: 1, sha256: sha256(bytes), memoryMB: 64, timeoutMs: 30_000, ...options };
}

/** An AppRunner over a real process pool and an on-disk cache whose source serves `published` by sha256. */
export function appHarness() {
  const dir = mkdtempSync(join(tmpdir(), "farmhand-apps-"));
  const pool = new ProcessPool({ graceMs: 500, niceness: 10, maxIdle: 1 });
  const cache = new ModuleCache({ dir: join(dir, "modules") });
  const published = new Map<string, Uint8Array>();
  const fetched: string[] = [];
  const runner = new AppRunner(pool, cache, (app) => {
    fetched.push(app.sha256);
    const bytes = published.get(app.sha256);
    return bytes ? Promise.resolve(bytes) : Promise.reject(new Error(`no module ${app.sha256}`));
  });
  return {
    runner,
    pool,
    cache,
    fetched,
    publish(bytes: Uint8Array, options: Partial<AppPin> = {}): AppPin {
      const pin = pinFor(bytes, options);
      published.set(pin.sha256, bytes);
      return pin;
    },
    /** Run and record everything the job reported. */
    async run(app: AppPin, payload: unknown, checkpoint?: string, abortAfterCheckpoints?: number) {
      const f = fakeCtx();
      const checkpoints: string[] = [];
      let cpuMs: number | undefined;
      const ctx = {
        ...f.ctx,
        onCheckpoint: (data: string) => {
          checkpoints.push(data);
          if (abortAfterCheckpoints !== undefined && checkpoints.length >= abortAfterCheckpoints) f.controller.abort(new Error("canceled by the test"));
        },
        onCpuMs: (ms: number) => void (cpuMs = ms),
      };
      try {
        const outcome = await runner.run({ app, payload, checkpoint }, ctx);
        return { ok: true as const, outcome, checkpoints, cpuMs, output: f.output(), progress: f.progress };
      } catch (error) {
        return { ok: false as const, error: error as Error & { retryable?: boolean }, checkpoints, cpuMs, output: f.output(), progress: f.progress };
      }
    },
    close() {
      pool.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
