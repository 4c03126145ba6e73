// The extension offers the farm exactly the Ollama models the donor chose, none by default (issue 26): a fake
// Ollama in this extension host lists three models, `farmhand.ollamaUrl` points at it, and the capabilities this
// machine's worker advertises are read from the farm's worker row (console:workers, with the farm's operator key).
import * as assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { ConvexHttpClient } from "convex/browser";
import { anyApi } from "convex/server";
import { after, before, describe, it } from "mocha";
import * as vscode from "vscode";
import { activateFarmhand, donateNow, type FarmhandApi, joinTestFarm, setFarmhandSetting, testFarm, waitUntil } from "./farmhand";

const LOCAL_MODELS = ["tiny:latest", "qwen:0.5b", "llama3:8b"];
const DONATE_NOW = donateNow("light");
/** A recipe only this file declares: once the farm's row shows it, the row holds what this window advertised last. */
const MARKER = "ollamamarker";

type WorkerRow = { keyPrefix: string; advertisedCapabilities: string[] };

describe("the Ollama models this machine offers the farm", function () {
  this.timeout(120_000);
  let api: FarmhandApi;
  let ollama: Server;
  let tagsAsked = 0;

  /** This window's worker (it joined with the test farm's worker key) as the farm records it. */
  const advertised = async (): Promise<string[]> => {
    const operatorKey = process.env.FARMHAND_TEST_OPERATOR_KEY;
    assert.ok(operatorKey, "the runner passed no FARMHAND_TEST_OPERATOR_KEY");
    const { page } = (await new ConvexHttpClient(testFarm().url).query(anyApi.console.workers, { apiKey: operatorKey })) as { page: WorkerRow[] };
    const mine = page.find((w) => testFarm().workerKey.startsWith(w.keyPrefix));
    assert.ok(mine, `no worker row of this window's key among ${page.length}`);
    return mine.advertisedCapabilities;
  };
  const ollamaOffer = (capabilities: string[]) => capabilities.filter((c) => c.startsWith("ollama"));
  /** Waits until the farm's row shows the marker recipe, then answers the Ollama part of what it advertises. */
  const offeredOnceAdvertised = async (what: string, accept: (caps: string[]) => boolean = () => true) =>
    ollamaOffer(await waitUntil(what, advertised, (caps) => caps.includes(`recipe.${MARKER}`) && accept(caps), 30_000));

  before(async () => {
    ollama = createServer((req, res) => {
      if (req.url !== "/api/tags") return void res.writeHead(404).end();
      tagsAsked++;
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ models: LOCAL_MODELS.map((name) => ({ name, model: name })) }));
    });
    await new Promise<void>((resolve) => ollama.listen(0, "127.0.0.1", resolve));
    api = await activateFarmhand();
    await joinTestFarm(api);
    await setFarmhandSetting("ollamaUrl", `http://127.0.0.1:${(ollama.address() as AddressInfo).port}`);
    await setFarmhandSetting("ollamaModels", undefined);
    await setFarmhandSetting("recipes", { [MARKER]: { command: process.execPath, args: ["-e", "0"] } });
    for (const [key, value] of Object.entries(DONATE_NOW)) await setFarmhandSetting(key, value);
    if (!api.getState().wanted) await vscode.commands.executeCommand("farmhand.toggle");
  });

  after(async () => {
    if (api?.getState().wanted) await vscode.commands.executeCommand("farmhand.toggle");
    for (const key of [...Object.keys(DONATE_NOW), "ollamaModels", "ollamaUrl", "recipes"]) await setFarmhandSetting(key, undefined);
    await new Promise((resolve) => ollama?.close(resolve));
  });

  it("offers no Ollama model while the donor chose none, though Ollama runs with three", async () => {
    assert.deepEqual(await offeredOnceAdvertised("the farm's row shows this window's recipes"), []);
  });

  it("offers exactly the model the donor chose, and none again once the choice is emptied", async () => {
    await setFarmhandSetting("ollamaModels", ["qwen:0.5b"]);
    const chosen = await offeredOnceAdvertised("the farm's row shows the chosen model", (caps) => ollamaOffer(caps).length > 0);
    assert.deepEqual(chosen, ["ollama.chat", "ollama.generate", "ollama:qwen:0.5b"]);
    assert.ok(tagsAsked > 0, "the fake Ollama was never asked for its models");
    await setFarmhandSetting("ollamaModels", []);
    assert.deepEqual(await offeredOnceAdvertised("the farm's row drops the model", (caps) => ollamaOffer(caps).length === 0), []);
  });
});
