// After the host suite: where Farmhand's worker key is, read from the outside. In code-server the workbench keeps
// SecretStorage in the browser's localStorage ("secrets.provider"), sealed with AES-GCM under a key made of a random
// client half (stored with the blob) XOR a server half (POST /mint-key); extension globalState lives in the browser's
// IndexedDB (vscode-web-state-db-*); settings and logs are files under the profile. The audit opens the secret store
// the way the workbench does, proves the key in it is live on the farm, and finds no worker key anywhere else.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { ConvexHttpClient } from "convex/browser";
import { anyApi } from "convex/server";

/** A whole worker key (fh_w_ and 43 base64url characters), as in test/host/secretPattern.ts. */
export const WORKER_KEY_PATTERN = /fh_w_[A-Za-z0-9_-]{43}/;
const FARMHAND = "farmhand.farmhand";

/** The workbench's SecretStorage, decrypted in the page: `{ '{"extensionId":…,"key":…}': value }`. */
export async function readSecretStorage(page) {
  return await page.evaluate(async () => {
    const sealed = localStorage.getItem("secrets.provider");
    if (!sealed) return {};
    const bytes = Uint8Array.from(atob(sealed), (c) => c.charCodeAt(0));
    const clientHalf = bytes.slice(0, 32);
    const iv = bytes.slice(32, 44);
    const serverHalf = new Uint8Array(await (await fetch("/mint-key", { method: "POST", credentials: "include" })).arrayBuffer());
    const raw = clientHalf.map((b, i) => b ^ serverHalf[i]);
    const key = await crypto.subtle.importKey("raw", raw, { name: "AES-GCM" }, false, ["decrypt"]);
    const plain = await crypto.subtle.decrypt({ name: "AES-GCM", iv }, key, bytes.slice(44));
    return JSON.parse(new TextDecoder().decode(plain));
  });
}

/** Every IndexedDB database of the page as `{ "db/store": [[key, value], …] }` (globalState lives there). */
export async function readIndexedDb(page) {
  return await page.evaluate(async () => {
    const request = (r) => new Promise((resolve, reject) => ((r.onsuccess = () => resolve(r.result)), (r.onerror = () => reject(r.error))));
    const dump = {};
    for (const { name } of await indexedDB.databases()) {
      const db = await request(indexedDB.open(name));
      for (const store of db.objectStoreNames) {
        const tx = db.transaction(store, "readonly").objectStore(store);
        const [keys, values] = await Promise.all([request(tx.getAllKeys()), request(tx.getAll())]);
        dump[`${name}/${store}`] = keys.map((k, i) => [String(k), typeof values[i] === "string" ? values[i] : JSON.stringify(values[i])]);
      }
      db.close();
    }
    return dump;
  });
}

/** Files under `dir` whose bytes contain a worker key, as paths relative to `dir`. */
export function filesHoldingAKey(dir) {
  const found = [];
  const visit = (path) => {
    const stat = statSync(path, { throwIfNoEntry: false });
    if (!stat) return;
    if (stat.isDirectory()) for (const name of readdirSync(path)) visit(join(path, name));
    else if (stat.isFile() && WORKER_KEY_PATTERN.test(readFileSync(path).toString("latin1"))) found.push(relative(dir, path));
  };
  visit(dir);
  return found;
}

/** Files under `dir` (recursively) whose name matches `pattern`. */
function findFiles(dir, pattern) {
  const found = [];
  const visit = (path) => {
    const stat = statSync(path, { throwIfNoEntry: false });
    if (stat?.isDirectory()) for (const name of readdirSync(path)) visit(join(path, name));
    else if (stat?.isFile() && pattern.test(path)) found.push(path);
  };
  visit(dir);
  return found;
}

/**
 * The post-run checks, each `{ title, passed, error? }`: the key is in SecretStorage and live on the farm; the
 * globalState entry of Farmhand exists and holds no key; the Farmhand log exists, says it joined, holds no key; no
 * file anywhere in the profile (settings, logs, state, Chromium's own storage) holds one.
 */
export async function auditSecrets({ page, profile, farmUrl }) {
  const checks = [];
  const check = async (title, body) => {
    try {
      await body();
      checks.push({ title, passed: true });
    } catch (error) {
      checks.push({ title, passed: false, error: error instanceof Error ? error.message : String(error) });
    }
  };

  await check("the worker key is in the workbench's SecretStorage (sealed), and the farm accepts it", async () => {
    const secrets = await readSecretStorage(page);
    const ours = Object.entries(secrets).filter(([id]) => {
      try {
        return JSON.parse(id).extensionId?.toLowerCase() === FARMHAND;
      } catch {
        return false;
      }
    });
    if (ours.length !== 1) throw new Error(`expected one Farmhand secret, found ${ours.length}: ${ours.map(([id]) => id).join(", ")}`);
    const [id, key] = ours[0];
    if (JSON.parse(id).key !== "farmhand.workerKey" || !WORKER_KEY_PATTERN.test(key)) throw new Error(`the Farmhand secret ${id} is not a worker key`);
    const localStorageText = await page.evaluate(() => JSON.stringify({ ...localStorage }));
    if (WORKER_KEY_PATTERN.test(localStorageText)) throw new Error("localStorage holds a worker key in the clear");
    await new ConvexHttpClient(farmUrl).query(anyApi.workers.checkKey, { apiKey: key }); // throws for a key the farm does not know
  });

  await check("Farmhand's globalState (browser IndexedDB) exists and holds no worker key", async () => {
    const dump = await readIndexedDb(page);
    const entries = Object.values(dump).flat();
    const ours = entries.filter(([key]) => key.toLowerCase() === FARMHAND);
    if (ours.length === 0) throw new Error(`no globalState entry for ${FARMHAND} in ${Object.keys(dump).join(", ") || "no database"}`);
    if (!ours.some(([, value]) => value.includes("farmhand.wanted"))) throw new Error(`Farmhand's globalState lacks farmhand.wanted: ${ours[0][1]}`);
    const leaks = entries.filter(([key, value]) => WORKER_KEY_PATTERN.test(key) || WORKER_KEY_PATTERN.test(value));
    if (leaks.length > 0) throw new Error(`IndexedDB entries hold a worker key: ${leaks.map(([key]) => key).join(", ")}`);
  });

  await check("the Farmhand log says it joined and holds no worker key", async () => {
    const logs = findFiles(join(profile.userDataDir, "logs"), /Farmhand\.log$/);
    if (logs.length === 0) throw new Error(`no Farmhand.log under ${join(profile.userDataDir, "logs")}`);
    const text = logs.map((path) => readFileSync(path, "utf8")).join("\n");
    if (!/Joined the farm at/.test(text)) throw new Error(`the Farmhand log does not record the join: ${logs.join(", ")}`);
    if (WORKER_KEY_PATTERN.test(text)) throw new Error("the Farmhand log holds a worker key");
  });

  await check("no file of the profile (settings, logs, state, Chromium storage) holds a worker key", () => {
    const leaks = filesHoldingAKey(profile.root);
    if (leaks.length > 0) throw new Error(`worker key found in: ${leaks.join(", ")}`);
  });

  return checks;
}
