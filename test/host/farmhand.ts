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
  status: { kind: string; reason?: string; jobs?: number; problem?: { kind: string; code?: string; message: string } };
  farmUrl: string;
  /** Jobs running on this machine ("This machine" in the tree). */
  jobs: Array<{ jobId: string; type: string; progress?: number; status?: string; startedAt: number; suspendedSince?: number }>;
  contribution: { succeeded: number; failed: number; canceled: number; busyMs: number };
  /** `farmhand.runApps` is on in the user settings (the panel's apps line and switch). */
  runsApps: boolean;
  /** The farm's credit for this machine this week (workers:myCredit), once a visible view asked for it. */
  credit?: { cpuHours: number; jobs: number };
  /** The policy as settings resolved it; `problems`: settings that could not be read. */
  policy: { preset: string; concurrency: number; idleMinutes: number; otherCpuPercent: number; problems: string[] };
  /** What a click on the status-bar item (or the panel's main button) does now. */
  toggle: "join" | "rejoin" | "start" | "stop" | "stopNow" | "resume";
  actions: { snooze: boolean; finish: boolean; fix?: { setting: string; label: string; how: "ask" | "open"; tab: "user" | "remote" } };
  /** GPU jobs alone are held: a program of farmhand.pauseGpuWhileRunning runs. */
  gpuPause?: { reason: string; fix: { setting: string } };
  farm: { freshness: { kind: string; asOf?: number }; figures?: unknown };
};
/** What each surface shows now, as text. */
export type FarmhandSurfaces = {
  /** `at`: the snapshot (its derivation time) the surface last drew. */
  statusBar: { text: string; tooltip: string; command: string | undefined; at?: number };
  /** `at` while the view is visible. */
  tree: { message: string | undefined; rows: string[]; at?: number };
  /** The state the control panel was last sent; undefined while it is hidden. */
  panel: (FarmhandState & { at: number }) | undefined;
  contextKeys: Record<string, unknown>;
};
export type FarmhandApi = { getState(): FarmhandState; surfaces(): FarmhandSurfaces; activationMs: number };

export async function activateFarmhand(): Promise<FarmhandApi> {
  const extension = vscode.extensions.getExtension<FarmhandApi>(EXTENSION_ID);
  assert.ok(extension, `${EXTENSION_ID} is not loaded from the development path`);
  const api = await extension.activate();
  assert.ok(api && typeof api.getState === "function", "the extension's exports have no getState()");
  return api;
}

/** Whether the extension's manifest declares the setting `farmhand.<key>`. */
/** The settings the extension's manifest declares. */
export function declaredSettings(): string[] {
  const manifest = vscode.extensions.getExtension(EXTENSION_ID)?.packageJSON as { contributes?: { configuration?: { properties?: object } } } | undefined;
  return Object.keys(manifest?.contributes?.configuration?.properties ?? {});
}

export function declaresSetting(key: string): boolean {
  return declaredSettings().includes(`farmhand.${key}`);
}

/** Writes a `farmhand.*` setting the way a user would (machine-scoped ones land in the remote machine settings). */
export async function setFarmhandSetting(key: string, value: unknown): Promise<void> {
  await vscode.workspace.getConfiguration("farmhand").update(key, value, vscode.ConfigurationTarget.Global);
}

/**
 * Runs `action` with every warning the extension shows answered `answer` (a modal cannot be clicked from here:
 * the window API the extension calls is swapped for the time being); returns the questions asked.
 */
export async function answeringWarnings(answer: string | undefined, action: () => Thenable<unknown>): Promise<string[]> {
  const asked: string[] = [];
  const window = vscode.window as { showWarningMessage: unknown };
  const original = window.showWarningMessage;
  window.showWarningMessage = (message: string, ...rest: unknown[]) => {
    asked.push(message);
    const options = rest[0];
    const modal = typeof options === "object" && options !== null && (options as { modal?: boolean }).modal === true;
    return Promise.resolve(modal ? answer : undefined);
  };
  try {
    await action();
  } finally {
    window.showWarningMessage = original;
  }
  return asked;
}

/** Settings that let this (remote) test window donate at once with `preset`, whatever else loads the machine. */
export function donateNow(preset: "full" | "medium" | "light", more: Record<string, unknown> = {}): Record<string, unknown> {
  return { preset, ...more, idleMinutes: 0, otherCpuThresholdPercent: 100, donateOnBattery: true, allowRemoteDonation: true, maxCpuTemperatureC: 0 };
}

/**
 * Whether a Farmhand context key (`farmhand.donating`, `farmhand.joined`) is true right now, read through the
 * test-only probe extension (test/host/fixtures/context-probe) whose command for that key is in the command
 * palette exactly while the key is true.
 */
async function contextKey(key: "farmhand.donating" | "farmhand.joined"): Promise<boolean> {
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

export type TestFarm = {
  url: string;
  /** An enrolled worker's key (fh_w_…). */
  workerKey: string;
  /** A client key (fh_c_…) that may submit jobs. */
  clientKey: string;
  /** A fresh enrollment token (fh_e_…), good for one machine. */
  joinToken: string;
  /** An enrollment token that has expired. */
  expiredToken: string;
};

/** The farm the runner started for this run (the project's loopback test server) and its secrets. */
export function testFarm(): TestFarm {
  const farm = {
    url: process.env.FARMHAND_TEST_FARM_URL,
    workerKey: process.env.FARMHAND_TEST_WORKER_KEY,
    clientKey: process.env.FARMHAND_TEST_CLIENT_KEY,
    joinToken: process.env.FARMHAND_TEST_JOIN_TOKEN,
    expiredToken: process.env.FARMHAND_TEST_EXPIRED_TOKEN,
  };
  for (const [name, value] of Object.entries(farm)) assert.ok(value, `the runner passed no test farm ${name} (FARMHAND_TEST_* variables)`);
  return farm as TestFarm;
}

/** Joins the runner's test farm the scripted way, unless already joined. */
export async function joinTestFarm(api: FarmhandApi): Promise<void> {
  if (api.getState().joined) return;
  const { url, workerKey } = testFarm();
  await vscode.commands.executeCommand("farmhand.join", { url, token: workerKey });
  assert.equal(api.getState().joined, true, "the scripted join returned but the extension is not joined");
}

/** Polls `read` until `accept` holds for its value or `timeoutMs` passes; returns that value, or fails showing the last. */
export async function waitUntil<T>(what: string, read: () => T | Promise<T>, accept: (value: T) => boolean, timeoutMs = 5_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last = await read();
  while (!accept(last) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    last = await read();
  }
  assert.ok(accept(last), `${what}: not within ${timeoutMs} ms; last saw ${JSON.stringify(last)}`);
  return last;
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
