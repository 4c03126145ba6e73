import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";

/** A webhook receiver on this machine (tests run with FARMHAND_WEBHOOK_ALLOW_PRIVATE=1, as a self-hosted farm may). */
export type Received = { method: string; path: string; headers: IncomingHttpHeaders; body: string };

/**
 * Answers every POST with `answer` (a status; a 3xx points elsewhere on it), or "hang": never, until closed. `received`
 * lists what came in, in order.
 */
export async function startReceiver(answer: number | "hang" = 204) {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      received.push({ method: req.method ?? "", path: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
      if (answer === "hang") return;
      if (answer >= 300 && answer < 400) res.setHeader("location", `${base}/elsewhere`);
      res.statusCode = answer;
      res.end(answer === 204 ? undefined : "answer");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: `${base}/hook`,
    port: (server.address() as AddressInfo).port,
    received,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
