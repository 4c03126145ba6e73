// The loopback Convex test server, exercised by real ConvexClients over WebSocket.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { ConvexClient, ConvexHttpClient } from "convex/browser";
import type { FunctionReference } from "convex/server";
import { ConvexError } from "convex/values";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { parseCliArgs } from "../server/cliArgs";
import { api as farmApi } from "../../convex/_generated/api";
import { fixtureConvexDir, seed, startTestServer, type FixtureSchema, type TestServer } from "../server/index";
import { api } from "../server/fixture/convex/_generated/api";
import { intervalMs } from "../server/cronRunner";
import { decodeTs } from "../server/protocol";
import { untypedRef } from "./serverTestKit";

type Message = { author: string; body: string };
/** A frame the server sent: its type, and fields each test reads as the shape it expects. */
type ServerFrame = { type: string } & Record<string, unknown>;

/** The error a call fails with; fails the test when the call succeeds. */
async function failureOf(call: Promise<unknown>): Promise<Error> {
  try {
    await call;
  } catch (error) {
    if (error instanceof Error) return error;
    throw error;
  }
  throw new Error("expected the call to fail");
}

async function waitFor<T>(read: () => T | undefined, what: string, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** A bare WebSocket speaking the sync protocol, for what a ConvexClient never does on purpose. */
async function rawSocket(url: string) {
  const socket = new WebSocket(`${url.replace("http", "ws")}/api/1.48.0/sync`);
  const inbox: ServerFrame[] = [];
  socket.on("message", (data: Buffer) => inbox.push(JSON.parse(data.toString("utf8")) as ServerFrame));
  await new Promise((resolve, reject) => {
    socket.once("open", resolve);
    socket.once("error", reject);
  });
  return {
    send: (message: object) => socket.send(JSON.stringify(message)),
    next: async <Frame extends object = ServerFrame>(type: string): Promise<Frame> => {
      const found = await waitFor(() => {
        const index = inbox.findIndex((message) => message.type === type);
        return index === -1 ? undefined : inbox.splice(index, 1)[0];
      }, `a ${type}`);
      return found as Frame;
    },
    close: () => socket.close(),
  };
}

describe("loopback test server with the fixture app", () => {
  let server: TestServer<FixtureSchema>;
  const clients: ConvexClient[] = [];
  const client = () => {
    const made = new ConvexClient(server.url, { logger: false });
    clients.push(made);
    return made;
  };
  /** Subscribes and keeps the latest result; `latest()` is undefined until the first one arrives. */
  const watch = <T>(made: ConvexClient, query: FunctionReference<"query">, args: Record<string, unknown> = {}) => {
    let latest: T | undefined;
    let error: Error | undefined;
    made.onUpdate(query, args, (value: T) => (latest = value), (e: Error) => (error = e));
    return { latest: () => latest, error: () => error };
  };

  beforeAll(async () => {
    // Crons off here: a cron's refresh would hide a missed refresh elsewhere. One test turns them on.
    server = await startTestServer<FixtureSchema>({ convexDir: fixtureConvexDir, crons: false });
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((made) => made.close()));
  });
  afterAll(async () => {
    await server.close();
  });

  it("pushes a mutation made by one client to another client's subscription", async () => {
    const reader = client();
    const writer = client();
    const list = watch<Message[]>(reader, api.messages.list, { author: "ann" });
    expect(await waitFor(list.latest, "first result")).toEqual([]);
    await writer.mutation(api.messages.send, { author: "ann", body: "hello" });
    await waitFor(() => (list.latest()?.length === 1 ? true : undefined), "the update");
    expect(list.latest()).toEqual([{ author: "ann", body: "hello" }]);
  });

  it("resolves a mutation only once the caller's own subscription shows its write", async () => {
    const writer = client();
    const list = watch<Message[]>(writer, api.messages.list, { author: "ben" });
    await waitFor(list.latest, "first result");
    await writer.mutation(api.messages.send, { author: "ben", body: "mine" });
    expect(list.latest()).toEqual([{ author: "ben", body: "mine" }]);
  });

  it("pushes only results that changed", async () => {
    const reader = client();
    let updates = 0;
    reader.onUpdate(api.messages.list, { author: "quiet" }, () => updates++);
    await waitFor(() => (updates === 1 ? true : undefined), "first result");
    const writer = client();
    await writer.mutation(api.messages.send, { author: "loud", body: "not for quiet" });
    const count = watch<number>(reader, api.messages.count);
    await waitFor(count.latest, "count");
    expect(updates).toBe(1);
  });

  it("delivers a ConvexError from a mutation with its data", async () => {
    const error = await client()
      .mutation(api.messages.send, { author: "ann", body: "" })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConvexError);
    expect((error as ConvexError<{ code: string }>).data).toEqual({ code: "empty_body", message: "A message needs a body" });
  });

  it("delivers a ConvexError from an action and from a subscribed query", async () => {
    const made = client();
    const actionError = await made.action(api.messages.failingAction, {}).catch((e: unknown) => e);
    expect(actionError).toBeInstanceOf(ConvexError);
    expect((actionError as ConvexError<{ code: string }>).data.code).toBe("action_refused");
    const failing = watch(made, api.messages.failingQuery);
    const queryError = await waitFor(failing.error, "the query error");
    expect(queryError).toBeInstanceOf(ConvexError);
    expect((queryError as ConvexError<{ code: string }>).data.code).toBe("query_refused");
  });

  it("reports a plain error's message without error data", async () => {
    const error = await client().mutation(api.messages.failPlain, {}).catch((e: unknown) => e);
    expect(error).not.toBeInstanceOf(ConvexError);
    expect((error as Error).message).toContain("plain failure");
  });

  it("gives clear errors for unknown, internal and wrongly-typed functions and bad arguments", async () => {
    const made = client();
    const unknown = await failureOf(made.mutation(untypedRef<"mutation">("messages:nope"), {}));
    expect(unknown.message).toContain("Could not find public function for 'messages:nope'");
    const internal = await failureOf(made.mutation(untypedRef<"mutation">("messages:insertScheduled"), { author: "x", body: "y" }));
    expect(internal.message).toContain("Could not find public function for 'messages:insertScheduled'");
    const wrongKind = await failureOf(made.mutation(untypedRef<"mutation">("messages:list"), {}));
    expect(wrongKind.message).toContain("Trying to execute messages:list as Mutation, but it is defined as Query");
    const badArgs = await failureOf(made.mutation(untypedRef<"mutation">("messages:send"), { author: 7 }));
    expect(badArgs).toBeInstanceOf(Error);
    expect((await failureOf(made.query(untypedRef<"query">("messages:list"), { author: 7 }))).message).toMatch(/author|validator/i);
  });

  it("runs functions in nested modules", async () => {
    expect(await client().query(api.dir.nested.hello, {})).toBe("hello from a nested module");
  });

  it("runs an action, whose writes reach subscriptions", async () => {
    const made = client();
    const list = watch<Message[]>(made, api.messages.list, { author: "cal" });
    await waitFor(list.latest, "first result");
    expect(await made.action(api.messages.shout, { author: "cal", body: "hey" })).toBe("HEY");
    await waitFor(() => (list.latest()?.length ? true : undefined), "the action's write");
    expect(list.latest()).toEqual([{ author: "cal", body: "HEY" }]);
  });

  it("pushes writes made by a scheduled function on its real timer", async () => {
    const made = client();
    const list = watch<Message[]>(made, api.messages.list, { author: "dee" });
    await waitFor(list.latest, "first result");
    const scheduledAt = Date.now();
    await made.mutation(api.messages.sendLater, { author: "dee", body: "later", delayMs: 200 });
    expect(list.latest()).toEqual([]);
    await waitFor(() => (list.latest()?.length ? true : undefined), "the scheduled write");
    expect(Date.now() - scheduledAt).toBeGreaterThanOrEqual(190);
    expect(list.latest()).toEqual([{ author: "dee", body: "later" }]);
  });

  it("notices a burst of scheduled functions larger than one scan page", async () => {
    const made = client();
    const count = watch<Message[]>(made, api.messages.list, { author: "many" });
    await waitFor(count.latest, "first result");
    await made.mutation(api.messages.sendManyLater, { author: "many", count: 520, delayMs: 50 });
    await waitFor(() => (count.latest()?.length === 520 ? true : undefined), "all 520 scheduled writes");
  });

  it("survives dropped connections: the client reconnects, resubscribes and finishes a mutation sent during the outage", async () => {
    const made = client();
    const list = watch<Message[]>(made, api.messages.list, { author: "eve" });
    await waitFor(list.latest, "first result");
    const outage = server.dropConnections(600);
    await waitFor(() => (server.connectionCount() === 0 ? true : undefined), "every socket closed");
    const sent = made.mutation(api.messages.send, { author: "eve", body: "during the outage" });
    await outage;
    await sent;
    await waitFor(() => (list.latest()?.length ? true : undefined), "the resubscribed result");
    expect(list.latest()).toEqual([{ author: "eve", body: "during the outage" }]);
    expect(server.connectionCount()).toBeGreaterThan(0);
  });

  it("does not run a mutation twice when the client resends it after a reconnect", async () => {
    const made = client();
    const count = watch<Message[]>(made, api.messages.list, { author: "fay" });
    await waitFor(count.latest, "first result");
    // Dropped right after sending: the client resends every unconfirmed mutation on its new connection.
    const sent = made.mutation(api.messages.send, { author: "fay", body: "once" });
    await new Promise((resolve) => setTimeout(resolve, 5));
    await server.dropConnections(200);
    await sent;
    await waitFor(() => (count.latest()?.length ? true : undefined), "the write");
    expect(await made.query(api.messages.list, { author: "fay" })).toEqual([{ author: "fay", body: "once" }]);
  });

  it("answers a mutation resent on a new connection of the same session from its cache", async () => {
    const sessionId = "3f6c1e2a-0000-4000-8000-000000000001";
    const mutation = { type: "Mutation", requestId: 0, udfPath: "messages:send", args: [{ author: "gil", body: "only once" }] };
    const first = await rawSocket(server.url);
    first.send({ type: "Connect", sessionId, connectionCount: 0, lastCloseReason: null, clientTs: Date.now() });
    first.send(mutation);
    const reply = await first.next<{ ts: string }>("MutationResponse");
    expect(reply).toMatchObject({ requestId: 0, success: true });
    const transition = await first.next<{ endVersion: { ts: string } }>("Transition");
    expect(decodeTs(transition.endVersion.ts) >= decodeTs(reply.ts)).toBe(true);
    first.close();

    const second = await rawSocket(server.url);
    second.send({ type: "Connect", sessionId, connectionCount: 1, lastCloseReason: "closed", clientTs: Date.now() });
    second.send(mutation);
    expect(await second.next("MutationResponse")).toEqual(reply);
    await second.next("Transition");
    second.close();
    expect(await client().query(api.messages.list, { author: "gil" })).toEqual([{ author: "gil", body: "only once" }]);
  });

  it("runs interval crons on real timers and pushes their writes", async () => {
    const withCrons = await startTestServer<FixtureSchema>({ convexDir: fixtureConvexDir });
    const made = new ConvexClient(withCrons.url, { logger: false });
    try {
      const ticks = watch<number>(made, api.ticks.count);
      expect(await waitFor(ticks.latest, "first count")).toBe(0);
      await waitFor(() => ((ticks.latest() ?? 0) > 0 ? true : undefined), "a cron tick", 3_000);
      expect(await client().query(api.ticks.count, {})).toBe(0);
    } finally {
      await made.close();
      await withCrons.close();
    }
  });

  it("reads interval schedules and skips the others", () => {
    expect(intervalMs({ type: "interval", seconds: 2 })).toBe(2_000);
    expect(intervalMs({ type: "interval", hours: 1 })).toBe(3_600_000);
    expect(intervalMs({ type: "daily" })).toBeUndefined();
  });

  it("rejects a bad dropConnections duration", () => {
    expect(() => server.dropConnections(-1)).toThrow(/duration/);
  });

  it("serves the app's HTTP routes and the HTTP client endpoints on the same port", async () => {
    const made = client();
    const list = watch<Message[]>(made, api.messages.list, { author: "gus" });
    await waitFor(list.latest, "first result");
    const posted = await fetch(`${server.url}/messages`, {
      method: "POST",
      body: JSON.stringify({ author: "gus", body: "over http" }),
    });
    expect(posted.status).toBe(201);
    await waitFor(() => (list.latest()?.length ? true : undefined), "the HTTP write");
    const bad = await fetch(`${server.url}/messages`, { method: "POST", body: JSON.stringify({ author: 1 }) });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({ error: "author and body must be strings" });
    expect((await fetch(`${server.url}/no-such-route`)).status).toBe(404);

    const http = new ConvexHttpClient(server.url, { logger: false });
    expect(await http.query(api.messages.list, { author: "gus" })).toEqual([{ author: "gus", body: "over http" }]);
    const error = await http.mutation(api.messages.send, { author: "gus", body: "" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConvexError);
    expect((error as ConvexError<{ code: string }>).data.code).toBe("empty_body");
    const notJson = await fetch(`${server.url}/api/mutation`, { method: "POST", body: "{oops" });
    expect(notJson.status).toBe(400);
    expect(((await notJson.json()) as { message: string }).message).toBe("The request body is not JSON");
    const noPath = await fetch(`${server.url}/api/query`, { method: "POST", body: JSON.stringify({ args: {} }) });
    expect(noPath.status).toBe(400);
    expect(((await noPath.json()) as { message: string }).message).toBe("The request body needs a string `path`");
  });

  it("answers protocol violations with a FatalError", async () => {
    const socket = new WebSocket(`${server.url.replace("http", "ws")}/api/1.48.0/sync`);
    const first = new Promise<unknown>((resolve, reject) => {
      socket.once("message", (data: Buffer) => resolve(JSON.parse(data.toString("utf8"))));
      socket.once("error", reject);
    });
    await new Promise((resolve) => socket.once("open", resolve));
    socket.send(JSON.stringify({ type: "Mutation", requestId: 0, udfPath: "messages:send", args: [{}] }));
    expect(await first).toEqual({ type: "FatalError", error: "Expected Connect as the first message, got Mutation" });
    socket.close();
  });

  it("answers bad frames and out-of-order query set versions with a FatalError", async () => {
    const garbage = await rawSocket(server.url);
    garbage.send({ type: "Teleport" });
    expect((await garbage.next<{ error: string }>("FatalError")).error).toMatch(/^Unknown client message/);
    garbage.close();

    const skipping = await rawSocket(server.url);
    skipping.send({ type: "Connect", sessionId: "3f6c1e2a-0000-4000-8000-000000000002", connectionCount: 0, lastCloseReason: null });
    skipping.send({ type: "ModifyQuerySet", baseVersion: 3, newVersion: 4, modifications: [] });
    expect((await skipping.next<{ error: string }>("FatalError")).error).toBe("Invalid query set base version 3, expected 0");
    skipping.close();
  });

  it("refuses WebSocket upgrades outside the sync path", async () => {
    const socket = new WebSocket(`${server.url.replace("http", "ws")}/elsewhere`);
    const failure = await new Promise<Error>((resolve) => socket.once("error", resolve));
    expect(failure.message).toContain("404");
  });

  it("lets tests write directly and still pushes the change", async () => {
    const made = client();
    const list = watch<Message[]>(made, api.messages.list, { author: "hal" });
    await waitFor(list.latest, "first result");
    await server.write((t) => t.run((ctx) => ctx.db.insert("messages", { author: "hal", body: "direct" })));
    await waitFor(() => (list.latest()?.length ? true : undefined), "the direct write");
  });
});

describe("loopback test server with the project's convex/", () => {
  it("seeds an org, a client key and enrolled workers whose doorbells ring", async () => {
    const server = await startTestServer();
    try {
      const seeded = await server.seed(2, { capabilities: ["recipe.wordcount"] });
      expect(seeded.workerKeys).toHaveLength(2);
      expect(new Set(seeded.workerKeys).size).toBe(2);
      const made = new ConvexClient(server.url, { logger: false });
      const rung = await made.query(farmApi.workers.doorbell, { apiKey: seeded.workerKeys[0] });
      expect(rung).toEqual({ offers: [], cancel: [], resync: false });
      const refused = await made.query(farmApi.workers.doorbell, { apiKey: "fh_w_not-a-real-key" }).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(ConvexError);
      // The client key submits, and the extra capability was granted: the job is offered to the waiting worker.
      let recipeBell: { offers: unknown[] } | undefined;
      made.onUpdate(farmApi.workers.doorbell, { apiKey: seeded.workerKeys[1] }, (v) => (recipeBell = v));
      await waitFor(() => recipeBell, "the recipe worker's doorbell");
      expect(recipeBell).toMatchObject({ offers: [] });
      await made.mutation(farmApi.workers.ready, { apiKey: seeded.workerKeys[1], capabilities: ["recipe.wordcount"], slots: 1 });
      await made.mutation(farmApi.jobs.submit, {
        clientKey: seeded.clientKey,
        type: "recipe.wordcount",
        payload: { text: "a b c" },
        requiredCapabilities: ["recipe.wordcount"],
      });
      await waitFor(() => (recipeBell?.offers.length ? true : undefined), "the job to be offered");
      await made.close();
      await expect(seed(server, -1)).rejects.toThrow(/whole number/);
      const other = await seed(server, 1);
      expect(other.orgId).not.toBe(seeded.orgId);
    } finally {
      await server.close();
    }
  });

  it("`npm run testserver -- --port 0 --seed 2 --conflict-window-ms 7` prints one JSON line, answers its stats and stops on SIGINT", async () => {
    // Its own process group, so the signal reaches npm, the shell and the server process alike.
    const child = spawn("npm", ["run", "--silent", "testserver", "--", "--port", "0", "--seed", "2", "--conflict-window-ms", "7"], {
      cwd: process.cwd(),
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    const groupAlive = () => {
      try {
        process.kill(-child.pid!, 0);
        return true;
      } catch {
        return false;
      }
    };
    try {
      const line = await waitFor(() => (stdout.includes("\n") ? stdout.split("\n")[0] : undefined), "the JSON line", 40_000);
      const printed = JSON.parse(line) as { url: string; orgId: string; clientKey: string; publishKey: string; operatorKey: string; workerKeys: string[] };
      expect(Object.keys(printed).sort()).toEqual(["clientKey", "operatorKey", "orgId", "publishKey", "url", "workerKeys"]);
      // the operator key reads the farm's metrics
      const metrics = await fetch(`${printed.url}/api/metrics`, { headers: { authorization: `Bearer ${printed.operatorKey}` } });
      expect([metrics.status, (await metrics.text()).includes("# TYPE farmhand_jobs gauge")]).toEqual([200, true]);
      expect(printed.publishKey).toMatch(/^fh_c_/);
      expect(printed.publishKey).not.toBe(printed.clientKey);
      expect(printed.workerKeys).toHaveLength(2);
      const made = new ConvexClient(printed.url, { logger: false });
      expect(await made.query(farmApi.workers.doorbell, { apiKey: printed.workerKeys[1] })).toMatchObject({ offers: [] });
      await made.close();
      const stats = (await (await fetch(`${printed.url}/__testserver/stats`)).json()) as { conflictWindowMs: number; functions: object };
      expect(stats.conflictWindowMs).toBe(7);
      expect(stats.functions).toHaveProperty(["workers:doorbell"]);
      expect(groupAlive()).toBe(true);
      process.kill(-child.pid!, "SIGINT");
      await waitFor(() => (groupAlive() ? undefined : true), "every process of the server to stop");
    } finally {
      if (groupAlive()) process.kill(-child.pid!, "SIGKILL");
    }
  });

  it("refuses to start on a missing folder, a folder without _generated, or a taken port", async () => {
    await expect(startTestServer({ convexDir: "/nonexistent/convex" })).rejects.toThrow("Convex functions folder not found: /nonexistent/convex");
    await expect(startTestServer({ convexDir: join(fixtureConvexDir, "dir") })).rejects.toThrow(/No _generated folder in .*dir/);
    const first = await startTestServer({ convexDir: fixtureConvexDir, crons: false });
    try {
      await expect(startTestServer({ convexDir: fixtureConvexDir, port: first.port })).rejects.toThrow(/EADDRINUSE/);
    } finally {
      await first.close();
    }
  });

  it("rejects bad command-line options with a clear message", () => {
    expect(parseCliArgs(["--port", "0", "--seed", "3"])).toMatchObject({ port: 0, seed: 3 });
    expect(() => parseCliArgs(["--port", "abc"])).toThrow("--port needs a whole number from 0 to 65535");
    expect(() => parseCliArgs(["--seed"])).toThrow("--seed needs a whole number");
    expect(() => parseCliArgs(["--bogus"])).toThrow('Unknown option "--bogus"');
    expect(parseCliArgs(["--conflict-window-ms", "50"])).toMatchObject({ conflictWindowMs: 50 });
    expect(parseCliArgs([]).conflictWindowMs).toBeUndefined();
    expect(() => parseCliArgs(["--conflict-window-ms", "-5"])).toThrow("--conflict-window-ms needs a whole number from 0 to 60000");
    expect(() => parseCliArgs(["--conflict-window-ms"])).toThrow("--conflict-window-ms needs a whole number");
    expect(parseCliArgs(["--stock-scan", "--seed", "2"])).toMatchObject({ stockScan: true, seed: 2 });
    expect(parseCliArgs([]).stockScan).toBeUndefined();
  });
});
