import { describe, expect, it } from "vitest";
import { httpModuleSource } from "../../../extension/handlers/apps/moduleSource";

const app = { name: "render", version: 3, sha256: "a".repeat(64), memoryMB: 64, timeoutMs: 1000 };

function fakeFetch(response: Response) {
  const calls: Array<{ url: string; auth: string | null }> = [];
  const fetch = ((url: string, init?: RequestInit) => {
    calls.push({ url, auth: new Headers(init?.headers).get("authorization") });
    return Promise.resolve(response);
  }) as typeof globalThis.fetch;
  return { fetch, calls };
}

describe("httpModuleSource", () => {
  it("downloads a version's module from the deployment's module route with the worker key", async () => {
    const f = fakeFetch(new Response(Uint8Array.from([0, 0x61, 0x73, 0x6d]), { status: 200 }));
    const source = httpModuleSource({ siteUrl: "https://happy-cat-123.convex.site/", apiKey: "fh_w_key", fetch: f.fetch });
    expect([...(await source(app))]).toEqual([0, 0x61, 0x73, 0x6d]);
    expect(f.calls).toEqual([{ url: "https://happy-cat-123.convex.site/api/apps/render/3/module", auth: "Bearer fh_w_key" }]);
  });

  it("fails without retry when the version is gone, and with retry on other errors", async () => {
    const gone = httpModuleSource({
      siteUrl: "http://x",
      apiKey: "k",
      fetch: fakeFetch(Response.json({ error: { code: "gone", message: "version 3 of app render was deleted" } }, { status: 410 })).fetch,
    });
    await expect(gone(app)).rejects.toMatchObject({
      message: 'cannot download app "render" v3: HTTP 410: version 3 of app render was deleted',
      retryable: false,
    });
    const busy = httpModuleSource({ siteUrl: "http://x", apiKey: "k", fetch: fakeFetch(new Response("oops", { status: 503 })).fetch });
    await expect(busy(app)).rejects.toMatchObject({ message: 'cannot download app "render" v3: HTTP 503', retryable: true });
  });
});
