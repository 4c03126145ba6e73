// The one connection helper behind both keys' connections (the worker key's FarmConnection and the console's
// ConsoleConnection): a client per farm URL lent while used, the key added to every call. The Convex client is
// faked: the test sees which clients were made and closed, what each call sent, and drives the socket's state.
import { afterEach, describe, expect, it, vi } from "vitest";
import { anyApi } from "convex/server";

type Sent = { kind: "query" | "mutation" | "watch"; args: Record<string, unknown> };
type FakeClient = {
  url: string;
  closed: boolean;
  sent: Sent[];
  connected: boolean;
  connectionListeners: Set<(s: { isWebSocketConnected: boolean }) => void>;
  setConnected(connected: boolean): void;
};
const made = vi.hoisted((): FakeClient[] => []);

vi.mock("convex/browser", () => ({
  ConvexClient: class {
    url: string;
    closed = false;
    sent: Sent[] = [];
    connected = false;
    connectionListeners = new Set<(s: { isWebSocketConnected: boolean }) => void>();
    constructor(url: string) {
      this.url = url;
      made.push(this);
    }
    query(_ref: unknown, args: Record<string, unknown>) {
      this.sent.push({ kind: "query", args });
      return Promise.resolve("answer");
    }
    mutation(_ref: unknown, args: Record<string, unknown>) {
      this.sent.push({ kind: "mutation", args });
      return Promise.resolve("done");
    }
    onUpdate(_ref: unknown, args: Record<string, unknown>) {
      this.sent.push({ kind: "watch", args });
      return () => undefined;
    }
    connectionState() {
      return { isWebSocketConnected: this.connected };
    }
    subscribeToConnectionState(listener: (s: { isWebSocketConnected: boolean }) => void) {
      this.connectionListeners.add(listener);
      return () => this.connectionListeners.delete(listener);
    }
    setConnected(connected: boolean) {
      this.connected = connected;
      for (const l of this.connectionListeners) l({ isWebSocketConnected: connected });
    }
    close() {
      this.closed = true;
      return Promise.resolve();
    }
  },
}));

const { KeyedConnection } = await import("../../../extension/donor/keyedConnection");

afterEach(() => {
  made.length = 0;
  vi.useRealTimers();
});

describe("a keyed connection", () => {
  it("without a key: no client, no subscription, and a call is refused with the connection's own words", async () => {
    const connection = new KeyedConnection(() => undefined, "this machine has not joined a farm");
    expect(connection.acquire()).toBeUndefined();
    expect(connection.watch(anyApi.farm.overview, {}, () => undefined, () => undefined)).toBeUndefined();
    expect(connection.watchConnection(() => undefined)).toBeUndefined();
    await expect(connection.run(anyApi.consoleActions.retryJob, { jobId: "j1" })).rejects.toThrow("this machine has not joined a farm");
    await expect(connection.query(anyApi.console.overview, {})).rejects.toThrow("this machine has not joined a farm");
    expect(made).toEqual([]);
  });

  it("adds the key to every call, and holds a client only while someone uses it", async () => {
    const connection = new KeyedConnection(() => ({ url: "https://a.example", apiKey: "fh_o_key" }), "no key");
    expect(await connection.run(anyApi.consoleActions.retryJob, { jobId: "j1" })).toBe("done");
    expect(await connection.query(anyApi.console.overview, {})).toBe("answer");
    expect(made.map((c) => [c.url, c.closed])).toEqual([
      ["https://a.example", true],
      ["https://a.example", true],
    ]);
    expect(made.flatMap((c) => c.sent)).toEqual([
      { kind: "mutation", args: { jobId: "j1", apiKey: "fh_o_key" } },
      { kind: "query", args: { apiKey: "fh_o_key" } },
    ]);

    const stopA = connection.watch(anyApi.console.overview, {}, () => undefined, () => undefined)!;
    const stopB = connection.watch(anyApi.console.job, { jobId: "j2" }, () => undefined, () => undefined)!;
    expect(made).toHaveLength(3);
    stopA();
    expect(made[2].closed).toBe(false);
    stopB();
    stopB();
    expect(made[2].closed).toBe(true);
  });

  it("when the farm changes, the old client serves its borrowers until they are done; new ones get the new farm", () => {
    let credential = { url: "https://a.example", apiKey: "fh_w_a" };
    const connection = new KeyedConnection(() => credential, "no key");
    const old = connection.acquire()!;
    credential = { url: "https://b.example", apiKey: "fh_w_b" };
    const fresh = connection.acquire()!;
    expect([old.apiKey, fresh.apiKey]).toEqual(["fh_w_a", "fh_w_b"]);
    expect(made.map((c) => c.url)).toEqual(["https://a.example", "https://b.example"]);
    old.release();
    expect(made.map((c) => c.closed)).toEqual([true, false]);
    connection.dispose();
    expect(made.map((c) => c.closed)).toEqual([true, true]);
  });

  it("tells a subscriber the connection's state at once and on each change only", () => {
    const connection = new KeyedConnection(() => ({ url: "https://a.example", apiKey: "fh_w_a" }), "no key");
    const seen: boolean[] = [];
    const stop = connection.watch(anyApi.farm.overview, {}, () => undefined, () => undefined, (c) => seen.push(c))!;
    made[0].setConnected(false);
    made[0].setConnected(true);
    made[0].setConnected(true);
    made[0].setConnected(false);
    expect(seen).toEqual([false, true, false]);
    stop();
  });

  it("watchConnection says offline when the first connection never comes up, and back when it does", () => {
    vi.useFakeTimers();
    const connection = new KeyedConnection(() => ({ url: "https://a.example", apiKey: "fh_o_key" }), "no key");
    const seen: boolean[] = [];
    const stop = connection.watchConnection((c) => seen.push(c), 15_000)!;
    vi.advanceTimersByTime(14_999);
    expect(seen).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(seen).toEqual([false]);
    made[0].setConnected(true);
    made[0].setConnected(false);
    expect(seen).toEqual([false, true, false]);
    stop();
    expect(made[0].closed).toBe(true);
  });

  it("watchConnection: a connection that came up and went down within the first-connect wait is not said offline twice", () => {
    vi.useFakeTimers();
    const connection = new KeyedConnection(() => ({ url: "https://a.example", apiKey: "fh_o_key" }), "no key");
    const seen: boolean[] = [];
    const stop = connection.watchConnection((c) => seen.push(c), 15_000)!;
    made[0].setConnected(false); // still not up: nothing to say yet
    made[0].setConnected(true);
    made[0].setConnected(false);
    made[0].setConnected(false);
    vi.advanceTimersByTime(15_000);
    expect(seen).toEqual([true, false]);
    stop();
  });
});
