// The extension offers exactly the Ollama models the donor chose in their user settings, none by default
// (issue 26), against a fake Ollama that has two models. VS Code's settings are faked: the test owns what
// `inspect("ollamaModels")` answers for the user (global) and the workspace.
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";

type Scope = Record<string, unknown>;
const settings = vi.hoisted((): { user: Scope; workspace: Scope } => ({ user: {}, workspace: {} }));

vi.mock("vscode", () => ({
  workspace: {
    getConfiguration: () => ({
      get: (key: string) => settings.workspace[key] ?? settings.user[key],
      inspect: (key: string) => ({ key, globalValue: settings.user[key], workspaceValue: settings.workspace[key] }),
      update: () => Promise.resolve(),
    }),
    onDidChangeConfiguration: () => ({ dispose: () => undefined }),
  },
  window: { showErrorMessage: () => Promise.resolve(undefined) },
  commands: { executeCommand: () => Promise.resolve(undefined) },
  ConfigurationTarget: { Global: 1, Workspace: 2 },
}));

const { EngineHandlers } = await import("../../../extension/donor/engineHandlers");

const LOCAL_MODELS = ["tiny:latest", "qwen:0.5b"];
const BUILT_INS = ["demo.echo", "demo.primes", "demo.slow", "demo.sum"];

let ollama: Server;
let stateDir: string;
const savedConfigHome = process.env.XDG_CONFIG_HOME;

beforeAll(async () => {
  stateDir = mkdtempSync(join(tmpdir(), "farmhand-engine-handlers-"));
  process.env.XDG_CONFIG_HOME = stateDir; // the apps module cache lives under the user state dir
  ollama = createServer((req, res) => {
    if (req.url === "/api/tags") res.end(JSON.stringify({ models: LOCAL_MODELS.map((name) => ({ name })) }));
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => ollama.listen(0, "127.0.0.1", resolve));
  settings.user.ollamaUrl = `http://127.0.0.1:${(ollama.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => ollama.close(resolve));
  if (savedConfigHome === undefined) delete process.env.XDG_CONFIG_HOME;
  else process.env.XDG_CONFIG_HOME = savedConfigHome;
  rmSync(stateDir, { recursive: true, force: true });
});

afterEach(() => {
  delete settings.user.ollamaModels;
  delete settings.workspace.ollamaModels;
});

const log = { error: () => undefined } as unknown as ConstructorParameters<typeof EngineHandlers>[0];

async function offered(): Promise<string[]> {
  const handlers = new EngineHandlers(log);
  try {
    return await handlers.registry.capabilities();
  } finally {
    handlers.dispose();
  }
}

describe("the Ollama models this machine offers", () => {
  it("none while the donor chose none, though Ollama runs with two models", async () => {
    expect(await offered()).toEqual(BUILT_INS);
  });

  it("none when only a workspace names models: a workspace can never add a model to offer", async () => {
    settings.workspace.ollamaModels = ["tiny"];
    expect(await offered()).toEqual(BUILT_INS);
  });

  it("exactly the ones the donor chose in the user settings", async () => {
    settings.user.ollamaModels = ["tiny"];
    expect(await offered()).toEqual([...BUILT_INS, "ollama.chat", "ollama.generate", "ollama:tiny", "ollama:tiny:latest"]);
  });

  it("follows a change of the choice when the settings are read again", async () => {
    const handlers = new EngineHandlers(log);
    try {
      expect(await handlers.registry.capabilities()).toEqual(BUILT_INS);
      settings.user.ollamaModels = ["qwen:0.5b"];
      handlers.reload();
      expect(await handlers.registry.capabilities()).toEqual([...BUILT_INS, "ollama.chat", "ollama.generate", "ollama:qwen:0.5b"]);
      settings.user.ollamaModels = [];
      handlers.reload();
      expect(await handlers.registry.capabilities()).toEqual(BUILT_INS);
    } finally {
      handlers.dispose();
    }
  });
});
