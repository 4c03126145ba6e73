// Small helpers the host tests share: the extension under test, its settings, context keys and waiting.
import * as assert from "node:assert/strict";
import * as vscode from "vscode";

export const EXTENSION_ID = "farmhand.farmhand";

/** Set by the code-server runner: the window is remote there. The desktop runner opens a local window. */
export function expectsRemoteWindow(): boolean {
  return process.env.FARMHAND_EXPECT_REMOTE === "1";
}

/** The part of the extension's exported API the tests read. */
export type FarmhandState = { donating: boolean; wanted?: boolean; joined?: boolean; status?: { kind: string; reason?: string } };
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
 * Whether the context key `farmhand.donating` is true right now, read through the test-only probe extension
 * (test/host/fixtures/context-probe) whose command is in the command palette exactly while it is.
 */
export async function donatingContextKey(): Promise<boolean> {
  const commands = await vscode.commands.executeCommand<Array<{ command: string }>>("_getAllCommands", true);
  assert.ok(Array.isArray(commands), "_getAllCommands returned no list");
  assert.ok(
    vscode.extensions.getExtension("farmhand-tests.context-probe"),
    "the context-probe fixture extension is not installed; the runner copies it into the extensions dir",
  );
  return commands.some((c) => c.command === "farmhandProbe.whileDonating");
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
