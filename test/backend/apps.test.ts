import { describe, expect, test } from "vitest";
import { api, internal } from "../../convex/_generated/api";
import { APP_LIMITS } from "../../convex/core/appLimits";
import { buildModule, FD_WRITE, u32 } from "../unit/apps/wasmBuilder";
import { answerOf, anyNumber, enrollWorker, expectCode, newBackend, newFarm, type Backend, type Farm } from "./setup";

const APP = buildModule({ imports: [FD_WRITE] });
const OTHER_APP = buildModule({ imports: [FD_WRITE], memory: { min: 2 } });

async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", bytes);
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** A farm with a publishing key next to its ordinary client key. */
async function publishingFarm(t: Backend = newBackend(), name = "acme") {
  const farm = await newFarm(t, name);
  const { key } = await t.mutation(internal.admin.createClientKey, { orgId: farm.orgId, name: "publisher", canPublish: true });
  return { ...farm, publishKey: key };
}

function publish(farm: Farm, name: string, body: Uint8Array | string, options: { key?: string | null; query?: string; contentType?: string } = {}) {
  const headers: Record<string, string> = { "content-type": options.contentType ?? "application/wasm" };
  const key = options.key === undefined ? (farm as Farm & { publishKey: string }).publishKey : options.key;
  if (key !== null) headers.authorization = `Bearer ${key}`;
  return farm.t.fetch(`/api/apps/${name}${options.query ? `?${options.query}` : ""}`, { method: "POST", headers, body: body as RequestInit["body"] });
}

function remove(farm: Farm, name: string, version: number | string, key: string) {
  return farm.t.fetch(`/api/apps/${name}/${version}`, { method: "DELETE", headers: { authorization: `Bearer ${key}` } });
}

function download(farm: Farm, name: string, version: number | string, key: string) {
  return farm.t.fetch(`/api/apps/${name}/${version}/module`, { headers: { authorization: `Bearer ${key}` } });
}

/** Every app version row and stored file, for "refusals store nothing". */
async function stored(t: Backend) {
  return await t.run(async (ctx) => ({
    versions: await ctx.db.query("appVersions").collect(),
    files: await ctx.db.system.query("_storage").collect(),
  }));
}

/** A valid app module padded with a custom section to exactly `total` bytes. */
function paddedTo(module: Uint8Array, total: number): Uint8Array {
  const name = [1, 0x70]; // "p"
  for (let padding = total - module.length - 2 - name.length; padding >= 0; padding--) {
    const size = u32(name.length + padding);
    if (module.length + 1 + size.length + name.length + padding === total) {
      const out = new Uint8Array(total);
      out.set(module);
      out.set([0, ...size, ...name], module.length);
      return out;
    }
  }
  throw new Error("cannot pad to that size");
}

describe("publishing an app", () => {
  test("answers name, version and sha256, and apps:list shows the version with its limits", async () => {
    const farm = await publishingFarm();
    const res = await publish(farm, "render", APP);
    expect(res.status).toBe(200);
    expect(await answerOf(res)).toEqual({ name: "render", version: 1, sha256: await sha256Hex(APP) });
    const listed = await farm.t.query(api.apps.list, { clientKey: farm.clientKey });
    expect(listed).toEqual([
      { name: "render", version: 1, sha256: await sha256Hex(APP), bytes: APP.length, memoryMB: 256, timeoutMs: 600_000, createdAt: anyNumber },
    ]);
    const { files } = await stored(farm.t);
    expect(files).toHaveLength(1);
    expect(files[0].sha256).toBeTruthy();
  });

  test("an operator key (fh_o_) publishes too, and its version records it; a revoked one is refused", async () => {
    const farm = await publishingFarm();
    const { key, operatorKeyId } = await farm.t.mutation(internal.admin.createOperatorKey, { orgId: farm.orgId, name: "ops" });
    const res = await publish(farm, "render", APP, { key });
    expect(res.status).toBe(200);
    expect(await answerOf(res)).toMatchObject({ name: "render", version: 1 });
    const { versions } = await stored(farm.t);
    expect(versions[0]).toMatchObject({ publishedByOperator: operatorKeyId });
    expect(versions[0].publishedBy).toBeUndefined();
    await farm.t.mutation(internal.admin.revokeOperatorKey, { operatorKeyId });
    expect((await publish(farm, "render", OTHER_APP, { key })).status).toBe(401);
    expect((await stored(farm.t)).versions).toHaveLength(1);
  });

  test("takes memoryMB and timeoutMs from the query", async () => {
    const farm = await publishingFarm();
    const res = await publish(farm, "sweep", APP, { query: `memoryMB=2048&timeoutMs=${24 * 3600 * 1000}` });
    expect(res.status).toBe(200);
    expect(await farm.t.query(api.apps.list, { clientKey: farm.clientKey })).toMatchObject([{ memoryMB: 2048, timeoutMs: 86_400_000 }]);
  });

  test("identical bytes and limits answer the latest version and store nothing new; anything different is a new version", async () => {
    const farm = await publishingFarm();
    expect((await answerOf(await publish(farm, "render", APP))).version).toBe(1);
    const before = await stored(farm.t);
    const again = await publish(farm, "render", APP);
    expect(await answerOf(again)).toEqual({ name: "render", version: 1, sha256: await sha256Hex(APP) });
    expect(await stored(farm.t)).toEqual(before);
    expect((await answerOf(await publish(farm, "render", APP, { query: "memoryMB=64" }))).version).toBe(2);
    expect((await answerOf(await publish(farm, "render", OTHER_APP, { query: "memoryMB=64" }))).version).toBe(3);
    // The same bytes as version 1 again: compared with the latest (3), so a new version.
    expect((await answerOf(await publish(farm, "render", APP))).version).toBe(4);
    expect((await stored(farm.t)).files).toHaveLength(4);
  });

  test("a second org publishes its own versions of the same name", async () => {
    const a = await publishingFarm();
    const b = await publishingFarm(a.t, "other");
    await publish(a, "render", APP);
    await publish(a, "render", OTHER_APP);
    expect((await answerOf(await publish(b, "render", APP))).version).toBe(1);
    expect((await a.t.query(api.apps.list, { clientKey: a.clientKey })).map((v) => v.version)).toEqual([1, 2]);
    expect((await b.t.query(api.apps.list, { clientKey: b.clientKey })).map((v) => v.version)).toEqual([1]);
  });

  test("accepts a module of exactly 20 MiB and refuses one byte more with 413", async () => {
    const farm = await publishingFarm();
    const max = paddedTo(APP, APP_LIMITS.moduleBytesMax);
    expect(max.length).toBe(20 * 1024 * 1024);
    expect((await publish(farm, "big", max)).status).toBe(200);
    const over = paddedTo(APP, APP_LIMITS.moduleBytesMax + 1);
    const res = await publish(farm, "bigger", over);
    expect(res.status).toBe(413);
    expect((await answerOf(res)).error?.code).toBe("too_large");
    expect((await stored(farm.t)).versions.map((v) => v.name)).toEqual(["big"]);
    // A Content-Length over the cap is refused before the body is read; a truthful one is used to read it.
    const declared = (length: number, bytes: Uint8Array) =>
      farm.t.fetch("/api/apps/declared", {
        method: "POST",
        headers: { authorization: `Bearer ${farm.publishKey}`, "content-type": "application/wasm", "content-length": String(length) },
        body: bytes as RequestInit["body"],
      });
    expect((await declared(APP_LIMITS.moduleBytesMax + 1, APP)).status).toBe(413);
    expect(await answerOf(await declared(APP.length, APP))).toMatchObject({ name: "declared", version: 1, sha256: await sha256Hex(APP) });
  });

  test("refusals answer a JSON error with a fitting status and store nothing", async () => {
    const farm = await publishingFarm();
    const { key: revokedKey, clientKeyId: revokedId } = await farm.t.mutation(internal.admin.createClientKey, {
      orgId: farm.orgId,
      name: "old",
      canPublish: true,
    });
    await farm.t.mutation(internal.admin.revokeClientKey, { clientKeyId: revokedId });
    const worker = await enrollWorker(farm, { allowed: ["apps"] });
    const component = Uint8Array.from([0, 0x61, 0x73, 0x6d, 0x0d, 0x00, 0x01, 0x00]);
    const cases: Array<[string, Promise<Response>, number, string]> = [
      ["no key", publish(farm, "a", APP, { key: null }), 401, "bad_key"],
      ["unknown key", publish(farm, "a", APP, { key: "fh_c_" + "Z".repeat(43) }), 401, "bad_key"],
      ["revoked key", publish(farm, "a", APP, { key: revokedKey }), 401, "revoked"],
      ["worker key", publish(farm, "a", APP, { key: worker.apiKey }), 401, "bad_key"],
      ["key without the right", publish(farm, "a", APP, { key: farm.clientKey }), 403, "forbidden"],
      ["uppercase name", publish(farm, "Render", APP), 400, "invalid_argument"],
      ["leading dash", publish(farm, "-render", APP), 400, "invalid_argument"],
      ["name of 65", publish(farm, "a".repeat(65), APP), 400, "invalid_argument"],
      ["escaped name", publish(farm, "ren%20der", APP), 400, "invalid_argument"],
      ["nested path", publish(farm, "render/1", APP), 404, "not_found"],
      ["memoryMB 0", publish(farm, "a", APP, { query: "memoryMB=0" }), 400, "invalid_argument"],
      ["memoryMB 2049", publish(farm, "a", APP, { query: "memoryMB=2049" }), 400, "invalid_argument"],
      ["memoryMB 1.5", publish(farm, "a", APP, { query: "memoryMB=1.5" }), 400, "invalid_argument"],
      ["memoryMB text", publish(farm, "a", APP, { query: "memoryMB=lots" }), 400, "invalid_argument"],
      ["memoryMB empty", publish(farm, "a", APP, { query: "memoryMB=" }), 400, "invalid_argument"],
      ["timeoutMs 0", publish(farm, "a", APP, { query: "timeoutMs=0" }), 400, "invalid_argument"],
      ["timeoutMs over a day", publish(farm, "a", APP, { query: `timeoutMs=${24 * 3600 * 1000 + 1}` }), 400, "invalid_argument"],
      ["unknown parameter", publish(farm, "a", APP, { query: "memory=5" }), 400, "invalid_argument"],
      ["JSON content type", publish(farm, "a", APP, { contentType: "application/json" }), 400, "invalid_argument"],
      ["empty body", publish(farm, "a", new Uint8Array(0)), 400, "invalid_argument"],
      ["a shell script", publish(farm, "a", "#!/bin/sh\necho hi\n"), 400, "invalid_argument"],
      ["a component", publish(farm, "a", component), 400, "invalid_argument"],
      ["cut short", publish(farm, "a", APP.subarray(0, APP.length - 4)), 400, "invalid_argument"],
      ["imports from env", publish(farm, "a", buildModule({ imports: [{ module: "env", name: "f", params: [], results: [] }] })), 400, "invalid_argument"],
      ["no _start", publish(farm, "a", buildModule({ exportStart: false })), 400, "invalid_argument"],
      ["no exported memory", publish(farm, "a", buildModule({ memory: { min: 1, exported: false } })), 400, "invalid_argument"],
      ["more memory at start than memoryMB", publish(farm, "a", buildModule({ memory: { min: 17 } }), { query: "memoryMB=1" }), 400, "invalid_argument"],
    ];
    for (const [label, response, status, code] of cases) {
      const res = await response;
      const answer = await answerOf(res);
      expect({ label, status: res.status, code: answer.error?.code }).toEqual({ label, status, code });
      expect(typeof answer.error?.message).toBe("string");
    }
    expect(await stored(farm.t)).toEqual({ versions: [], files: [] });
  });

  test("explains what is wrong with a module", async () => {
    const farm = await publishingFarm();
    const messages = async (module: Uint8Array | string) => (await answerOf(await publish(farm, "a", module))).error?.message;
    expect(await messages("#!/bin/sh")).toContain("does not start with \\0asm");
    expect(await messages(buildModule({ imports: [{ module: "env", name: "f", params: [], results: [] }] }))).toContain(
      'imports "env.f"; an app may import only wasi_snapshot_preview1 functions',
    );
    expect(await messages(buildModule({ exportStart: false }))).toContain("exports no _start function");
  });
});

describe("deleting a version", () => {
  test("removes its module, keeps its row marked deleted, and takes it out of apps:list", async () => {
    const farm = await publishingFarm();
    await publish(farm, "render", APP);
    await publish(farm, "render", OTHER_APP);
    const res = await remove(farm, "render", 1, farm.publishKey);
    expect(res.status).toBe(200);
    expect(await answerOf(res)).toEqual({ name: "render", version: 1, deleted: true });
    const { versions, files } = await stored(farm.t);
    expect(versions.find((v) => v.version === 1)).toMatchObject({ deleted: true, deletedAt: anyNumber });
    expect(versions.find((v) => v.version === 1)?.storageId).toBeUndefined();
    expect(files).toHaveLength(1);
    expect((await farm.t.query(api.apps.list, { clientKey: farm.clientKey })).map((v) => v.version)).toEqual([2]);
    // Again: the same answer, nothing changes.
    expect(await answerOf(await remove(farm, "render", 1, farm.publishKey))).toEqual({ name: "render", version: 1, deleted: true });
  });

  test("publishing the deleted latest version's bytes again makes a new version", async () => {
    const farm = await publishingFarm();
    await publish(farm, "render", APP);
    await remove(farm, "render", 1, farm.publishKey);
    expect(await answerOf(await publish(farm, "render", APP))).toMatchObject({ version: 2 });
  });

  test("refuses other keys, unknown versions and malformed routes", async () => {
    const farm = await publishingFarm();
    const other = await publishingFarm(farm.t, "other");
    await publish(farm, "render", APP);
    const before = await stored(farm.t);
    const cases: Array<[string, Promise<Response>, number, string]> = [
      ["key without the right", remove(farm, "render", 1, farm.clientKey), 403, "forbidden"],
      ["another org's publishing key", remove(farm, "render", 1, other.publishKey), 404, "not_found"],
      ["unknown version", remove(farm, "render", 2, farm.publishKey), 404, "not_found"],
      ["unknown app", remove(farm, "paint", 1, farm.publishKey), 404, "not_found"],
      ["version 0", remove(farm, "render", 0, farm.publishKey), 404, "not_found"],
      ["version text", remove(farm, "render", "latest", farm.publishKey), 404, "not_found"],
      ["bad name", remove(farm, "Render", 1, farm.publishKey), 400, "invalid_argument"],
    ];
    for (const [label, response, status, code] of cases) {
      const res = await response;
      expect({ label, status: res.status, code: (await answerOf(res)).error?.code }).toEqual({ label, status, code });
    }
    expect(await stored(farm.t)).toEqual(before);
  });
});

describe("downloading a module (workers)", () => {
  test("a worker of the org allowed to run apps gets the exact bytes", async () => {
    const farm = await publishingFarm();
    await publish(farm, "render", APP);
    const worker = await enrollWorker(farm, { allowed: ["apps"] });
    const res = await download(farm, "render", 1, worker.apiKey);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/wasm");
    const bytes = new Uint8Array(await res.arrayBuffer());
    expect(await sha256Hex(bytes)).toBe(await sha256Hex(APP));
    // A wildcard grant allows it too.
    const any = await enrollWorker(farm, { allowed: ["*"] });
    expect((await download(farm, "render", 1, any.apiKey)).status).toBe(200);
  });

  test("refuses client keys, workers not allowed apps, other orgs' workers, unknown and deleted versions", async () => {
    const farm = await publishingFarm();
    const other = await publishingFarm(farm.t, "other");
    await publish(farm, "render", APP);
    await publish(farm, "render", OTHER_APP);
    await remove(farm, "render", 1, farm.publishKey);
    const worker = await enrollWorker(farm, { allowed: ["apps"] });
    const plain = await enrollWorker(farm, { allowed: ["demo.echo"] });
    const outsider = await enrollWorker(other, { allowed: ["apps"] });
    const cases: Array<[string, Promise<Response>, number, string]> = [
      ["client key", download(farm, "render", 2, farm.publishKey), 401, "bad_key"],
      ["worker not allowed apps", download(farm, "render", 2, plain.apiKey), 403, "forbidden"],
      ["another org's worker", download(farm, "render", 2, outsider.apiKey), 404, "not_found"],
      ["unknown version", download(farm, "render", 3, worker.apiKey), 404, "not_found"],
      ["deleted version", download(farm, "render", 1, worker.apiKey), 410, "gone"],
      ["no module suffix", farm.t.fetch("/api/apps/render/2", { headers: { authorization: `Bearer ${worker.apiKey}` } }), 404, "not_found"],
      ["no key", farm.t.fetch("/api/apps/render/2/module"), 401, "bad_key"],
    ];
    for (const [label, response, status, code] of cases) {
      const res = await response;
      expect({ label, status: res.status, code: (await answerOf(res)).error?.code }).toEqual({ label, status, code });
    }
  });
});

describe("keys and listing", () => {
  test("client keys cannot publish unless created with canPublish", async () => {
    const farm = await newFarm();
    const rows = await farm.t.run(async (ctx) => await ctx.db.query("clientKeys").collect());
    expect(rows.map((r) => r.canPublish)).toEqual([false]);
    const { clientKeyId } = await farm.t.mutation(internal.admin.createClientKey, { orgId: farm.orgId, name: "p", canPublish: true });
    expect((await farm.t.run(async (ctx) => await ctx.db.get(clientKeyId)))?.canPublish).toBe(true);
  });

  test("apps:list refuses a bad key and shows only the caller's org", async () => {
    const a = await publishingFarm();
    const b = await publishingFarm(a.t, "other");
    await publish(a, "render", APP);
    expect(await b.t.query(api.apps.list, { clientKey: b.clientKey })).toEqual([]);
    await expectCode(a.t.query(api.apps.list, { clientKey: "fh_c_nope" }), "bad_key");
  });
});
