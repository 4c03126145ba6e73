// Small helpers the host tests share: the extension under test, its settings, context keys and waiting.
import * as assert from "node:assert/strict";
import * as vscode from "vscode";

export const EXTENSION_ID = "farmhand.farmhand";

/** Set by the code-server runner: the window is remote there. The desktop runner opens a local window. */
export function expectsRemoteWindow(): boolean {
  return process.env.FARMHAND_EXPECT_REMOTE === "1";
}

/** The part of the extension's exported API the tests read. */
export type FarmhandState = {
  joined: boolean;
  /** The donor switched donating on (the policy may still hold it back). */
  wanted: boolean;
  /** The policy lets this window donate now. */
  donating: boolean;
  status: { kind: string; reason?: string };
};
export type FarmhandApi = { getState(): FarmhandState };

export async function activateFarmhand(): Promise<FarmhandApi> {
  const extension = vscode.extensions.getExtension<FarmhandApi>(EXTENSION_ID);
  assert.ok(extension, `${EXTENSION_ID} is not loaded from the development path`);
  const api = await extension.activate();
  assert.ok(api && typeof api.getState === "function", "the extension's exports have no getState()");
  return api;
}

/** Whether the extension's manifest declares the setting `farmhand.<key>`. */
export function declaresSetting(key: string): boolean {
  const properties = vscode.extensions.getExtension(EXTENSION_ID)?.packageJSON?.contributes?.configuration?.properties;
  return properties !== undefined && `farmhand.${key}` in properties;
}

/** Writes a `farmhand.*` setting the way a user would (machine-scoped ones land in the remote machine settings). */
export async function setFarmhandSetting(key: string, value: unknown): Promise<void> {
  await vscode.workspace.getConfiguration("farmhand").update(key, value, vscode.ConfigurationTarget.Global);
}

/**
 * Whether a Farmhand context key (`farmhand.donating`, `farmhand.joined`) is true right now, read through the
 * test-only probe extension (test/host/fixtures/context-probe) whose command for that key is in the command
 * palette exactly while the key is true.
 */
export async function contextKey(key: "farmhand.donating" | "farmhand.joined"): Promise<boolean> {
  assert.ok(
    vscode.extensions.getExtension("farmhand-tests.context-probe"),
    "the context-probe fixture extension is not installed; the runner copies it into the extensions dir",
  );
  const commands = await vscode.commands.executeCommand<Array<{ command: string }>>("_getAllCommands", true);
  assert.ok(Array.isArray(commands), "_getAllCommands returned no list");
  return commands.some((c) => c.command === `farmhandProbe.${key}`);
}

export const donatingContextKey = () => contextKey("farmhand.donating");
export const joinedContextKey = () => contextKey("farmhand.joined");

/** The farm the runner started for this run (the project's loopback test server) and a worker key for it. */
export function testFarm(): { url: string; workerKey: string } {
  const url = process.env.FARMHAND_TEST_FARM_URL;
  const workerKey = process.env.FARMHAND_TEST_WORKER_KEY;
  assert.ok(url && workerKey, "the runner passed no test farm (FARMHAND_TEST_FARM_URL, FARMHAND_TEST_WORKER_KEY)");
  return { url, workerKey };
}

/** Joins the runner's test farm the scripted way, unless already joined. */
export async function joinTestFarm(api: FarmhandApi): Promise<void> {
  if (api.getState().joined) return;
  const { url, workerKey } = testFarm();
  await vscode.commands.executeCommand("farmhand.join", { url, token: workerKey });
  assert.equal(api.getState().joined, true, "the scripted join returned but the extension is not joined");
}

/** Polls `read` until it returns `expected` or `timeoutMs` passes; fails with the last value seen. */
export async function waitForValue<T>(what: string, read: () => T | Promise<T>, expected: T, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = await read();
  while (last !== expected && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    last = await read();
  }
  assert.equal(last, expected, `${what}: expected ${String(expected)} within ${timeoutMs} ms, last saw ${String(last)}`);
}
