import { once } from "node:events";
import { mkdtempSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { socketHandshake } from "../../../../extension/policy/idle/socketHandshake";

let server: Server | undefined;
afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

/** A unix-socket server that answers each greeting with `reply(greeting)` (nothing when it returns undefined). */
async function serve(reply: (greeting: string) => string[] | undefined): Promise<{ path: string; sockets: Socket[] }> {
  const path = join(mkdtempSync(join(tmpdir(), "farmhand-handshake-")), "s");
  const sockets: Socket[] = [];
  server = createServer((socket) => {
    sockets.push(socket);
    socket.once("data", (data) => {
      for (const part of reply(data.toString("latin1")) ?? []) socket.write(part);
    });
  });
  await new Promise<void>((resolve) => server!.listen(path, resolve));
  return { path, sockets };
}

const failure = (why: { timedOut: true } | { connectError: string } | { refused: string }) =>
  new Error("timedOut" in why ? "timed out" : "connectError" in why ? `connect: ${why.connectError}` : `refused: ${why.refused}`);

/** Complete once a line ends; "NO …" is a refusal. */
const lineAnswer = (received: Buffer) => {
  const text = received.toString("latin1");
  if (!text.includes("\r\n")) return undefined;
  if (text.startsWith("NO")) throw new Error(text.trim());
  return text.trim();
};

describe("socketHandshake (the D-Bus and X11 connection openers)", () => {
  it("resolves with the open socket once the answer is complete, even when it arrives in pieces", async () => {
    const { path } = await serve((greeting) => (greeting === "HELLO\r\n" ? ["OK ab", "cd\r\n"] : undefined));
    const { socket, answer } = await socketHandshake({ path, greeting: "HELLO\r\n", answer: lineAnswer, timeoutMs: 2_000, failure });
    expect(answer).toBe("OK abcd");
    expect(socket.destroyed).toBe(false);
    socket.destroy();
  });

  it("rejects a refusal with the parser's words and closes the socket", async () => {
    const { path, sockets } = await serve(() => ["NO thanks\r\n"]);
    await expect(socketHandshake({ path, greeting: "HELLO\r\n", answer: lineAnswer, timeoutMs: 2_000, failure })).rejects.toThrow("refused: NO thanks");
    // the server's end of it closes (the test's time limit ends a wait for a socket left open)
    const closed = sockets[0].destroyed || sockets[0].readableEnded || (await once(sockets[0], "close"), true);
    expect(closed).toBe(true);
  });

  it("rejects a server that never answers after its timeout, and one that is not there with the system's reason", async () => {
    const { path } = await serve(() => undefined);
    await expect(socketHandshake({ path, greeting: "HELLO\r\n", answer: lineAnswer, timeoutMs: 100, failure })).rejects.toThrow("timed out");
    await expect(socketHandshake({ path: `${path}-missing`, greeting: "HELLO\r\n", answer: lineAnswer, timeoutMs: 2_000, failure })).rejects.toThrow(/^connect: .*ENOENT/);
  });
});
