import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import { AppsRuntime, type AppsFarmAccess } from "../../../extension/handlers/apps/appsSetup";
import type { AppPin } from "../../../extension/handlers/apps/appPin";
import { ProcessPool } from "../../../extension/handlers/processPool";
import { fakeCtx } from "../handlers/fakeCtx";
import { sha256 } from "./harness";
import { echoStdin, endlessLoop } from "./hostileApps";

// The extension builds a new apps handler on every settings reload (recipes, Ollama, runApps, the farm's key);
// the module cache must outlive those handlers: one cache per worker.

const pin = (bytes: Uint8Array, timeoutMs = 30_000): AppPin => ({ name: "test-app", version: 1, sha256: sha256(bytes), memoryMB: 64, timeoutMs });

/** A farm whose module route serves these modules as versions 1, 2, …, recording downloads; `hold` holds them until `release`. */
function moduleRoute(modules: Uint8Array[]) {
  const downloads: string[] = [];
  let open: () => void = () => undefined;
  let gate = Promise.resolve();
  const fetch = (async (url: string) => {
    const bytes = modules[Number(/\/(\d+)\/module$/.exec(url)?.[1]) - 1];
    downloads.push(url);
    await gate;
    return bytes ? new Response(bytes) : new Response("{}", { status: 404 });
  }) as typeof globalThis.fetch;
  const access: AppsFarmAccess = { deploymentUrl: "http://127.0.0.1:9", siteUrl: "http://127.0.0.1:9", apiKey: "fh_w_test", fetch };
  return {
    access,
    downloads,
    hold() {
      gate = new Promise<void>((resolve) => (open = resolve));
    },
    release: () => open(),
  };
}

describe("the apps runtime keeps one module cache across settings reloads", { timeout: 30_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), "farmhand-apps-runtime-"));
  const pool = new ProcessPool({ graceMs: 500, niceness: 10, maxIdle: 2 });
  afterAll(() => {
    pool.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("a reload while a module downloads shares that download: the new handler's job downloads nothing more", async () => {
    const echo = echoStdin();
    const app = pin(echo);
    const farm = moduleRoute([echo]);
    const runtime = new AppsRuntime(pool, { stateDir: join(dir, "one") });
    farm.hold();
    const before = runtime.handlerFor(farm.access);
    const first = before.run({ n: 1 }, { ...fakeCtx("j1").ctx, app });
    await vi.waitFor(() => expect(farm.downloads).toHaveLength(1));
    // the settings change: a new handler for the same farm
    const after = runtime.handlerFor(farm.access);
    const second = after.run({ n: 2 }, { ...fakeCtx("j2").ctx, app });
    farm.release();
    expect(await first).toEqual({ payload: { n: 1 } });
    expect(await second).toEqual({ payload: { n: 2 } });
    // and once more after another reload: still the one download
    expect(await runtime.handlerFor(farm.access).run({ n: 3 }, { ...fakeCtx("j3").ctx, app })).toEqual({ payload: { n: 3 } });
    expect(farm.downloads).toEqual(["http://127.0.0.1:9/api/apps/test-app/1/module"]);
  });

  it("a module a running job holds is not evicted by a download through the handler of a later reload", async () => {
    const loop = endlessLoop();
    const echo = echoStdin();
    // version 1 loops until canceled, version 2 echoes; a cache of one byte keeps only what is in use
    const looping = { ...pin(loop, 60_000), version: 1 };
    const echoing = { ...pin(echo), version: 2 };
    const farm = moduleRoute([loop, echo]);
    const runtime = new AppsRuntime(pool, { stateDir: join(dir, "two"), cacheBytes: 1 });
    const loopPath = join(dir, "two", "app-modules", `${looping.sha256}.wasm`);
    const held = fakeCtx("long");
    const running = runtime.handlerFor(farm.access).run(null, { ...held.ctx, app: looping });
    await vi.waitFor(() => expect(existsSync(loopPath)).toBe(true));
    expect(await runtime.handlerFor(farm.access).run({ n: 1 }, { ...fakeCtx("short").ctx, app: echoing })).toEqual({ payload: { n: 1 } });
    expect(existsSync(loopPath)).toBe(true);
    held.controller.abort(new Error("canceled by the test"));
    await expect(running).rejects.toThrow();
  });
});
