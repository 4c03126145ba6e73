import { createServer, connect, type Server, type Socket } from "node:net";

/**
 * A TCP proxy in front of the test server for ONE client, so a test can take that client offline (its
 * sockets die, new ones are refused) while the server and every other client carry on — a laptop that
 * lost its Wi-Fi, not a server outage.
 */
export class CutProxy {
  private readonly sockets = new Set<Socket>();
  private cut = false;

  private constructor(private readonly server: Server, readonly url: string) {}

  static async start(targetUrl: string): Promise<CutProxy> {
    const target = new URL(targetUrl);
    const server = createServer();
    // Nobody knows the port before listen() resolves: the proxy exists before its first connection.
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as { port: number }).port;
    const proxy = new CutProxy(server, `http://127.0.0.1:${port}`);
    server.on("connection", (client) => {
      if (proxy.cut) return void client.destroy();
      const upstream = connect(Number(target.port), target.hostname);
      for (const s of [client, upstream]) {
        proxy.sockets.add(s);
        s.on("close", () => proxy.sockets.delete(s));
        s.on("error", () => s.destroy());
      }
      client.pipe(upstream).pipe(client);
      client.on("close", () => upstream.destroy());
      upstream.on("close", () => client.destroy());
    });
    return proxy;
  }

  /** Drop this client's connections and refuse new ones until `restore`. */
  disconnect(): void {
    this.cut = true;
    for (const s of this.sockets) s.destroy();
  }

  restore(): void {
    this.cut = false;
  }

  async close(): Promise<void> {
    this.disconnect();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
