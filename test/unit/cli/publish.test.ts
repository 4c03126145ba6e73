import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parsePublishArgs, publishApp, PublishError, type PublishOptions } from "../../../extension/cli/publish";
import { readSecretFile, secretFilePath, writeSecretFile } from "../../../extension/cli/secretFiles";
import { siteUrlFor } from "../../../extension/handlers/apps/siteUrl";

const dir = mkdtempSync(join(tmpdir(), "farmhand-publish-"));
const module = join(dir, "app.wasm");
writeFileSync(module, Buffer.from([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0]));

describe("the site URL", () => {
  it("is the .convex.site of a .convex.cloud deployment, the URL itself otherwise, or what was given", () => {
    expect(siteUrlFor("https://happy-otter-123.convex.cloud")).toBe("https://happy-otter-123.convex.site");
    expect(siteUrlFor("https://happy-otter-123.convex.cloud/")).toBe("https://happy-otter-123.convex.site");
    expect(siteUrlFor("http://127.0.0.1:8187")).toBe("http://127.0.0.1:8187");
    expect(siteUrlFor("https://x.convex.cloud", "https://api.example.com/")).toBe("https://api.example.com");
  });
});

describe("publish arguments", () => {
  const args = (...rest: string[]) => ["--url", "https://x.convex.cloud", "--name", "render", ...rest];

  it("takes the key from --key or FARMHAND_KEY and derives the site URL", () => {
    expect(parsePublishArgs(args("--key", "fh_c_a", module), {})).toMatchObject({ siteUrl: "https://x.convex.site", key: "fh_c_a", name: "render", file: module });
    expect(parsePublishArgs(args(module), { FARMHAND_KEY: "fh_c_env" }).key).toBe("fh_c_env");
    expect(parsePublishArgs(args("--memory-mb", "64", "--timeout-ms", "5000", module), { FARMHAND_KEY: "k" })).toMatchObject({ memoryMB: 64, timeoutMs: 5000 });
  });

  it("takes the app's cache default in milliseconds, from a second to the retention age, and none without the flag", () => {
    expect(parsePublishArgs(args("--cache-ttl", "3600000", module), { FARMHAND_KEY: "k" }).cacheTtlMs).toBe(3_600_000);
    expect(parsePublishArgs(args("--cache-ttl", "1000", module), { FARMHAND_KEY: "k" }).cacheTtlMs).toBe(1_000);
    expect(parsePublishArgs(args("--cache-ttl", "604800000", module), { FARMHAND_KEY: "k" }).cacheTtlMs).toBe(604_800_000);
    expect(parsePublishArgs(args(module), { FARMHAND_KEY: "k" }).cacheTtlMs).toBeUndefined();
  });

  it.each([
    [["--name", "render", module], "--url is required"],
    [["--url", "https://x.convex.cloud", module], "--name is required"],
    [["--url", "https://x.convex.cloud", "--name", "Bad_Name", module], "--name must match"],
    [["--url", "ftp://x", "--name", "a", module], "--url must start with http"],
    [args(), "give exactly one module file"],
    [args("--memory-mb", "4096", module), "--memory-mb must be a whole number from 1 to 2048"],
    [args("--timeout-ms", "9e9", module), "--timeout-ms must be a whole number"],
    [args("--cache-ttl", "999", module), "--cache-ttl must be a whole number from 1000 to 604800000, got 999"],
    [args("--cache-ttl", "604800001", module), "--cache-ttl must be a whole number from 1000 to 604800000"],
    [args("--cache-ttl", "1h", module), "--cache-ttl must be a whole number from 1000 to 604800000, got 1h"],
  ])("refuses %j", (argv, message) => {
    expect(() => parsePublishArgs(argv, { FARMHAND_KEY: "k" })).toThrow(message);
  });

  it("needs a key", () => {
    const empty = { XDG_CONFIG_HOME: mkdtempSync(join(tmpdir(), "farmhand-nokey-")) };
    expect(() => parsePublishArgs(args(module), empty)).toThrow(/no key: pass --key, set FARMHAND_KEY .* or FARMHAND_OPERATOR_KEY .* or keep an operator key in .*operator\.json/);
  });

  it("takes an operator key from FARMHAND_OPERATOR_KEY, else from the operator key file beside the worker's", () => {
    const env = { XDG_CONFIG_HOME: mkdtempSync(join(tmpdir(), "farmhand-opkey-")) };
    expect(parsePublishArgs(args(module), { ...env, FARMHAND_OPERATOR_KEY: " fh_o_env " }).key).toBe("fh_o_env");
    const path = secretFilePath("operator", env);
    expect(path).toBe(join(env.XDG_CONFIG_HOME, "farmhand", "operator.json"));
    writeSecretFile(path, { url: "https://x.convex.cloud", key: "fh_o_file", name: "ops" });
    expect(readSecretFile(path)).toEqual({ url: "https://x.convex.cloud", key: "fh_o_file", name: "ops" });
    expect(parsePublishArgs(args(module), env).key).toBe("fh_o_file");
    // a client key named explicitly (or in FARMHAND_KEY) comes first
    expect(parsePublishArgs(args(module), { ...env, FARMHAND_KEY: "fh_c_env" }).key).toBe("fh_c_env");
    expect(parsePublishArgs(args("--key", "fh_c_arg", module), env).key).toBe("fh_c_arg");
  });
});

describe("publishing", () => {
  const options: PublishOptions = { help: false, siteUrl: "https://x.convex.site", name: "render", key: "fh_c_k", file: module, memoryMB: 64 };
  const answering = (status: number, body: unknown) => {
    const requests: Array<{ url: string; init: RequestInit }> = [];
    const doFetch = ((url: string, init: RequestInit) => {
      requests.push({ url, init });
      return Promise.resolve(new Response(JSON.stringify(body), { status }));
    }) as unknown as typeof fetch;
    return { doFetch, requests };
  };
  const failure = async (status: number, body: unknown) => (await publishApp(options, answering(status, body).doFetch).catch((e: unknown) => e)) as PublishError;

  it("posts the module with the key and limits and answers the version", async () => {
    const { doFetch, requests } = answering(200, { name: "render", version: 2, sha256: "ab" });
    expect(await publishApp(options, doFetch)).toEqual({ name: "render", version: 2, sha256: "ab" });
    expect(requests[0].url).toBe("https://x.convex.site/api/apps/render?memoryMB=64");
    expect(requests[0].init.headers).toMatchObject({ authorization: "Bearer fh_c_k", "content-type": "application/wasm" });
  });

  it("sends the cache default as ?cacheTtlMs= and prints the version's cacheTtlMs the server answers", async () => {
    const { doFetch, requests } = answering(200, { name: "render", version: 3, sha256: "ab", cacheTtlMs: 60_000 });
    expect(await publishApp({ ...options, cacheTtlMs: 60_000 }, doFetch)).toEqual({ name: "render", version: 3, sha256: "ab", cacheTtlMs: 60_000 });
    expect(requests[0].url).toBe("https://x.convex.site/api/apps/render?memoryMB=64&cacheTtlMs=60000");
  });

  it("explains each refusal, with the exit code for its kind", async () => {
    const bad = await failure(401, { error: { code: "bad_key", message: "Unknown client key" } });
    expect([bad.message, bad.exitCode]).toEqual(["the key was refused (bad_key): Unknown client key; publishing needs a client key (fh_c_…) with the publish right or an operator key (fh_o_…) of the farm", 4]);
    const forbidden = await failure(403, { error: { code: "forbidden", message: "no" } });
    expect(forbidden.message).toMatch(/may not publish apps.*canPublish/);
    expect(forbidden.exitCode).toBe(4);
    const invalid = await failure(400, { error: { code: "invalid_argument", message: "not a WebAssembly module" } });
    expect(invalid.message).toBe(`the farm refused ${module} (invalid_argument): not a WebAssembly module`);
    expect(invalid.exitCode).toBe(1);
    const large = await failure(413, { error: { code: "too_large", message: "over 20 MiB" } });
    expect(large.message).toMatch(/is too large: over 20 MiB; a module may be at most 20971520 bytes/);
    const unrouted = await failure(404, {});
    expect(unrouted.message).toMatch(/no app routes at https:\/\/x.convex.site/);
  });

  it("says when the file cannot be read or the site cannot be reached", async () => {
    const missing = (await publishApp({ ...options, file: join(dir, "nope.wasm") }).catch((e: unknown) => e)) as PublishError;
    expect([missing.exitCode, missing.message]).toEqual([2, expect.stringMatching(/cannot read .*nope.wasm/)]);
    const offline = (() => Promise.reject(new TypeError("fetch failed"))) as unknown as typeof fetch;
    const unreachable = (await publishApp(options, offline).catch((e: unknown) => e)) as PublishError;
    expect([unreachable.exitCode, unreachable.message]).toEqual([3, "cannot reach https://x.convex.site: fetch failed (is the URL right and the deployment up?)"]);
  });
});
