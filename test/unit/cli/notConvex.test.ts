import { createServer, type Server } from "node:http";
import { WebSocketServer } from "ws";
import { afterEach, describe, expect, it } from "vitest";
import { drainingLine } from "../../../extension/cli/drainText";
import { runCli, type CliIo } from "../../../extension/cli/main";
import { notConvexMessage, probeDeployment } from "../../../extension/worker/deploymentProbe";

let server: Server | undefined;
afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

/** A web server that is not a Convex deployment: a page over HTTP, and HTML over its websocket (as another app's would). */
async function notConvex(): Promise<string> {
  server = createServer((_req, res) => res.writeHead(200, { "Content-Type": "text/html" }).end("<!doctype html><title>my app</title>"));
  const sockets = new WebSocketServer({ server });
  sockets.on("connection", (socket) => socket.send("<!doctype html> hello"));
  server.on("close", () => sockets.close());
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (!address || typeof address === "string") throw new Error("no port");
  return `http://127.0.0.1:${address.port}`;
}

function io() {
  const out: string[] = [];
  const err: string[] = [];
  const cliIo: CliIo = { env: {}, out: (l) => out.push(l), err: (l) => err.push(l), onSignal: () => () => undefined };
  return { cliIo, out, err };
}

describe("a URL that is not a Convex deployment", () => {
  it("the CLI says so in the extension's words and exits 2, without a stack trace", async () => {
    const url = await notConvex();
    expect(await probeDeployment(url)).toBe("notConvex");
    const { cliIo, out, err } = io();
    const code = await runCli(["--no-ollama", "--url", url, "--token", `fh_e_${"a".repeat(43)}`, "--name", "box"], cliIo);
    expect(code).toBe(2);
    expect(err).toEqual([`farmhand-worker: ${notConvexMessage(url)}`]);
    expect(err.join("\n")).toMatch(/does not answer like a Convex deployment — check the deployment URL your operator gave you/);
    expect([...out, ...err].join("\n")).not.toMatch(/SyntaxError|at .*\(/);
  });

  it("nothing listening is unreachable (left to the connection timeout's message), not 'not Convex'", async () => {
    const url = await notConvex();
    await new Promise<void>((resolve) => server!.close(() => resolve()));
    server = undefined;
    expect(await probeDeployment(url, 1_000)).toBe("unreachable");
  });
});

describe("a deployment that answers a server error of a proxy's, not Convex's", () => {
  it("is unreachable for now (the worker's connection retries wait it out), not 'not Convex'", async () => {
    for (const status of [502, 503]) {
      server = createServer((_req, res) => res.writeHead(status, { "Content-Type": "text/plain" }).end("Service Unavailable"));
      await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
      const address = server.address();
      if (!address || typeof address === "string") throw new Error("no port");
      expect(await probeDeployment(`http://127.0.0.1:${address.port}`, 1_000)).toBe("unreachable");
      await new Promise<void>((resolve) => server!.close(() => resolve()));
      server = undefined;
    }
  });

  it("a web page (200, HTML) is still not Convex", async () => {
    const url = await notConvex();
    expect(await probeDeployment(url)).toBe("notConvex");
  });
});

describe("the CLI's first Ctrl-C", () => {
  it("says what it finishes, and plainly that nothing runs when nothing does", () => {
    expect(drainingLine(0)).toBe("draining: no job is running; stopping");
    expect(drainingLine(1)).toBe("draining: finishing 1 running job; press Ctrl-C again to stop now");
    expect(drainingLine(3)).toBe("draining: finishing 3 running jobs; press Ctrl-C again to stop now");
  });
});
