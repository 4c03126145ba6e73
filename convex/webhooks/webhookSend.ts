"use node";
import { lookup } from "node:dns/promises";
import { request as httpRequest, type RequestOptions } from "node:http";
import { request as httpsRequest } from "node:https";
import { isIP, type LookupFunction } from "node:net";
import { addressRefusal } from "./webhookAddress";

/**
 * One webhook POST from a Node action (convex/webhookDelivery.ts), pinned to the address it checked. The name is
 * resolved here, once; with the guard on, every answer must be a public address (webhooks/webhookAddress.ts) or nothing is
 * sent; the connection then goes to the first answer through a lookup that returns it, so a DNS answer that changes
 * between the check and the connect (rebinding) reaches nobody new. TLS still checks the certificate against the
 * name. Redirects are not followed.
 */

/** A name's addresses: the system resolver in production; a test may hand its own. */
export type Resolver = (hostname: string) => Promise<Array<{ address: string; family: number }>>;

const systemResolver: Resolver = async (hostname) => await lookup(hostname, { all: true, verbatim: true });

export type Post = { url: string; headers: Record<string, string>; body: string; timeoutMs: number };
export type PostOptions = { guard: boolean; resolve?: Resolver };
/** The receiver's status, or why there is none (not sent, no answer in time, a network error). */
export type Sent = { status: number } | { error: string };

export async function postWebhook(post: Post, options: PostOptions): Promise<Sent> {
  const url = new URL(post.url);
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  let answers: Array<{ address: string; family: number }>;
  if (isIP(host) !== 0) answers = [{ address: host, family: isIP(host) }];
  else {
    try {
      answers = await (options.resolve ?? systemResolver)(host);
    } catch (e) {
      return { error: `not sent: ${host} does not resolve (${(e as Error).message})`.slice(0, 500) };
    }
  }
  if (answers.length === 0) return { error: `not sent: ${host} has no address` };
  if (options.guard) {
    for (const { address } of answers) {
      const what = addressRefusal(address);
      if (what) return { error: `not sent: ${host} resolves to ${address}, ${what}` };
    }
  }
  return await send(url, post, answers[0]);
}

function pinned(answer: { address: string; family: number }): LookupFunction {
  return (_hostname, options, callback) => {
    if (options.all) callback(null, [answer]);
    else callback(null, answer.address, answer.family);
  };
}

function send(url: URL, post: Post, answer: { address: string; family: number }): Promise<Sent> {
  const request = url.protocol === "https:" ? httpsRequest : httpRequest;
  const options: RequestOptions = {
    method: "POST",
    hostname: url.hostname.replace(/^\[(.*)\]$/, "$1"),
    port: url.port || undefined,
    path: `${url.pathname}${url.search}`,
    headers: { ...post.headers, "content-length": String(Buffer.byteLength(post.body)) },
    lookup: pinned(answer),
    agent: false,
  };
  return new Promise<Sent>((resolve) => {
    let timedOut = false;
    const req = request(options, (res) => {
      clearTimeout(timer);
      res.resume();
      resolve({ status: res.statusCode ?? 0 });
      res.destroy();
    });
    const timer = setTimeout(() => {
      timedOut = true;
      req.destroy();
    }, post.timeoutMs);
    req.on("error", (e) => {
      clearTimeout(timer);
      resolve({ error: timedOut ? `no answer within ${post.timeoutMs} ms` : e.message.slice(0, 500) });
    });
    req.end(post.body);
  });
}
