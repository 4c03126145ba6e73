import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ProcessPool } from "../../../extension/handlers/processPool";
import { createBuiltinRegistry } from "../../../extension/handlers";
import { ollamaCapabilities, probeOllama } from "../../../extension/handlers/ollama";
import { fakeCtx } from "./fakeCtx";

/** A tiny stand-in for Ollama's HTTP API. */
function fakeOllama(): Promise<{ server: Server; url: string; requests: unknown[] }> {
  const requests: unknown[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (d) => (body += d)).on("end", () => {
      if (req.url === "/api/tags") {
        res.end(JSON.stringify({ models: [{ name: "tiny:latest" }, { name: "qwen:0.5b" }] }));
        return;
      }
      const json = JSON.parse(body) as { model?: string };
      requests.push({ url: req.url, ...json });
      if (json.model === "missing") {
        res.statusCode = 404;
        res.end(JSON.stringify({ error: `model "missing" not found, try pulling it first` }));
        return;
      }
      res.setHeader("content-type", "application/x-ndjson");
      const tokens = ["Hel", "lo", " there."];
      for (const t of tokens) {
        res.write(JSON.stringify(req.url === "/api/chat" ? { message: { role: "assistant", content: t }, done: false } : { response: t, done: false }) + "\n");
      }
      res.end(JSON.stringify({ done: true, done_reason: "stop", eval_count: 3 }) + "\n");
    });
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests })));
}

/** The URL of a local port nothing listens on. */
async function closedPortUrl(): Promise<string> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const port = (s.address() as AddressInfo).port;
  await new Promise((r) => s.close(r));
  return `http://127.0.0.1:${port}`;
}

// The time limit is for a busy machine, where a child process can take seconds to start.
describe("ollama handlers", { timeout: 60_000 }, () => {
  let fake: Awaited<ReturnType<typeof fakeOllama>>;
  // Normal priority: these tests are about the handlers, not politeness, and at the lowest priority a child on a
  // busy machine gets next to no CPU (processPool.test.ts checks the lowered priority).
  const pool = new ProcessPool({ niceness: 0 });
  beforeAll(async () => {
    fake = await fakeOllama();
  });
  afterAll(() => {
    pool.close();
    fake.server.close();
  });

  it("streams a generation token by token and returns the whole text", async () => {
    const f = fakeCtx();
    const result = await pool.run({ builtin: "ollama.generate", options: { url: fake.url } }, { model: "tiny", prompt: "hi" }, f.ctx);
    expect(result).toEqual({ model: "tiny", response: "Hello there.", done_reason: "stop", eval_count: 3 });
    expect(f.output()).toBe("Hello there.");
    expect(fake.requests.at(-1)).toEqual({ url: "/api/generate", model: "tiny", prompt: "hi", stream: true });
  });

  it("streams a chat reply", async () => {
    const f = fakeCtx();
    const messages = [{ role: "user", content: "hi" }];
    const result = await pool.run({ builtin: "ollama.chat", options: { url: fake.url } }, { model: "tiny", messages }, f.ctx);
    expect(result).toMatchObject({ model: "tiny", message: { role: "assistant", content: "Hello there." } });
  });

  it("reports a missing model without retry, and a bad payload clearly", async () => {
    await expect(pool.run({ builtin: "ollama.generate", options: { url: fake.url } }, { model: "missing", prompt: "x" }, fakeCtx().ctx)).rejects.toMatchObject({
      message: 'Ollama answered 404 for /api/generate: model "missing" not found, try pulling it first',
      retryable: false,
    });
    await expect(pool.run({ builtin: "ollama.chat", options: { url: fake.url } }, { model: "tiny" }, fakeCtx().ctx)).rejects.toMatchObject({
      message: 'ollama.chat needs a payload { model: string, messages: [{ role, content }, ...] }, got {"model":"tiny"}',
      retryable: false,
    });
  });

  it("says clearly when Ollama is not running", async () => {
    const down = await closedPortUrl();
    await expect(pool.run({ builtin: "ollama.generate", options: { url: down } }, { model: "tiny", prompt: "x" }, fakeCtx().ctx)).rejects.toThrow(
      `Ollama is not reachable at ${down} (ECONNREFUSED); is it running? Start it with \`ollama serve\``,
    );
    expect(await probeOllama(down)).toEqual({ running: false, error: `Ollama is not running at ${down} (ECONNREFUSED)` });
  });

  it("advertises ollama:<model> for each local model, and nothing while Ollama is down", async () => {
    expect(ollamaCapabilities(["tiny:latest", "qwen:0.5b", "Llama3:8B-Q4_K_M", "x".repeat(80)])).toEqual([
      "ollama:llama3:8b-q4_k_m",
      "ollama:qwen:0.5b",
      "ollama:tiny",
      "ollama:tiny:latest",
    ]);
    const up = createBuiltinRegistry({ ollama: { url: fake.url } });
    expect(await up.registry.capabilities()).toEqual([
      "demo.echo",
      "demo.primes",
      "demo.slow",
      "demo.sum",
      "ollama.chat",
      "ollama.generate",
      "ollama:qwen:0.5b",
      "ollama:tiny",
      "ollama:tiny:latest",
    ]);
    const down = createBuiltinRegistry({ ollama: { url: await closedPortUrl() }, recipes: [{ name: "build", command: "make" }] });
    expect(await down.registry.capabilities()).toEqual(["demo.echo", "demo.primes", "demo.slow", "demo.sum", "recipe.build"]);
    up.pool.close();
    down.pool.close();
  });

  it("offers only the models the donor chose, none when none are chosen, and refuses a job for another model", async () => {
    const chosen = createBuiltinRegistry({ ollama: { url: fake.url, models: ["tiny"] } });
    expect(await chosen.registry.capabilities()).toEqual(["demo.echo", "demo.primes", "demo.slow", "demo.sum", "ollama.chat", "ollama.generate", "ollama:tiny", "ollama:tiny:latest"]);
    const none = createBuiltinRegistry({ ollama: { url: fake.url, models: [] } });
    expect(none.registry.types()).toEqual(["demo.echo", "demo.primes", "demo.slow", "demo.sum"]);
    const options = { url: fake.url, models: ["tiny"] };
    await expect(pool.run({ builtin: "ollama.generate", options }, { model: "qwen:0.5b", prompt: "x" }, fakeCtx().ctx)).rejects.toMatchObject({
      message: 'this machine does not offer the Ollama model "qwen:0.5b" (it offers tiny)',
      retryable: true,
    });
    expect(await pool.run({ builtin: "ollama.generate", options }, { model: "tiny:latest", prompt: "x" }, fakeCtx().ctx)).toMatchObject({ response: "Hello there." });
    chosen.pool.close();
    none.pool.close();
  });
});
