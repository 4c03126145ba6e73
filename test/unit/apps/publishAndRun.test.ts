// The whole path of a module without the queue: an operator publishes over HTTP, a worker's module cache
// downloads it through the worker route with its key, and the runner runs it.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { convexTest } from "convex-test";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { api, internal } from "../../../convex/_generated/api";
import schema from "../../../convex/schema";
import { AppRunner } from "../../../extension/handlers/apps/appRunner";
import { ModuleCache } from "../../../extension/handlers/apps/moduleCache";
import { httpModuleSource } from "../../../extension/handlers/apps/moduleSource";
import { fakeCtx } from "../handlers/fakeCtx";
import { modules } from "../../backend/setup";
import { appHarness } from "./harness";

describe("publish, download, run", { timeout: 60_000 }, () => {
  const h = appHarness();
  afterAll(() => h.close());
  let mandelbrot: Uint8Array;
  beforeAll(async () => {
    const { buildApps } = await import("../../../examples/apps/build.mjs");
    mandelbrot = readFileSync(buildApps({ log: () => undefined }).mandelbrot);
  }, 180_000);

  it("runs the version a publisher put on the deployment, fetched once with the worker's key", async () => {
    const t = convexTest(schema, modules);
    const orgId = await t.mutation(internal.admin.createOrg, { name: "acme" });
    const { key: publishKey } = await t.mutation(internal.admin.createClientKey, { orgId, name: "ops", canPublish: true });
    const { token } = await t.mutation(internal.admin.createEnrollment, { orgId, capabilities: ["apps"] });
    const { apiKey } = await t.mutation(api.workers.enroll, { token, name: "donor", machineId: "m1", capabilities: ["apps"] });

    const published = await t.fetch("/api/apps/mandelbrot?memoryMB=64&timeoutMs=60000", {
      method: "POST",
      headers: { authorization: `Bearer ${publishKey}`, "content-type": "application/wasm" },
      body: mandelbrot as unknown as RequestInit["body"],
    });
    expect(published.status).toBe(200);
    const { version, sha256 } = (await published.json()) as { version: number; sha256: string };

    const downloads: string[] = [];
    const source = httpModuleSource({
      siteUrl: "https://some.convex.site",
      apiKey,
      fetch: (async (url: string, init?: RequestInit) => {
        downloads.push(url);
        return await t.fetch(new URL(url).pathname, init);
      }) as typeof fetch,
    });
    const runner = new AppRunner(h.pool, h.cache, source);
    const app = { name: "mandelbrot", version, sha256, memoryMB: 64, timeoutMs: 60_000 };
    for (const size of [8, 16]) {
      const outcome = await runner.run({ app, payload: { width: size, height: size } }, fakeCtx().ctx);
      expect(outcome.result).toMatchObject({ width: size, height: size });
    }
    expect(downloads).toEqual([`https://some.convex.site/api/apps/mandelbrot/${version}/module`]);

    // A version deleted before a worker had it cached fails without retry.
    await t.fetch(`/api/apps/mandelbrot/${version}`, { method: "DELETE", headers: { authorization: `Bearer ${publishKey}` } });
    const freshDir = mkdtempSync(join(tmpdir(), "farmhand-fresh-cache-"));
    const other = new AppRunner(h.pool, new ModuleCache({ dir: freshDir }), source);
    try {
      await expect(other.run({ app, payload: {} }, fakeCtx().ctx)).rejects.toMatchObject({
        message: `cannot download app "mandelbrot" v${version}: HTTP 410: Version ${version} of app mandelbrot was deleted`,
        retryable: false,
      });
    } finally {
      rmSync(freshDir, { recursive: true, force: true });
    }
  });
});
