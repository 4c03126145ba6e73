// The delivery's own guard at connect time (webhooks/webhookSend.ts): a public name that resolves to a private address is
// refused before anything is sent, and the connection goes to the address that was checked, resolved once.
import { afterEach, describe, expect, test } from "vitest";
import { addressRefusal } from "../../convex/webhooks/webhookAddress";
import { postWebhook, type Resolver } from "../../convex/webhooks/webhookSend";
import { startReceiver } from "./webhookReceiver";

let receiver: Awaited<ReturnType<typeof startReceiver>> | undefined;
afterEach(async () => {
  await receiver?.close();
  receiver = undefined;
});

const post = (url: string, timeoutMs = 5_000) => ({ url, headers: { "content-type": "application/json" }, body: '{"ok":true}', timeoutMs });

/** A resolver that answers `answers` in turn (the last one again when they run out), counting its calls. */
function resolver(...answers: string[][]): Resolver & { calls: string[] } {
  const calls: string[] = [];
  const resolve = (hostname: string) => {
    calls.push(hostname);
    const addresses = answers[Math.min(calls.length - 1, answers.length - 1)];
    return Promise.resolve(addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 })));
  };
  return Object.assign(resolve, { calls });
}

describe("addresses as a resolver answers them", () => {
  test.each([
    ["127.0.0.1", "a loopback address"],
    ["10.1.2.3", "a private address (RFC 1918)"],
    ["::1", "a loopback address"],
    ["::FFFF:127.0.0.1", "an IPv4-mapped address"],
    ["::ffff:0:10.0.0.1", "an IPv4-translated address (RFC 2765)"],
    ["fe80::1%eth0", "a link-local address"],
    ["64:ff9b:1::a", "a local-use NAT64 address (RFC 8215)"],
    ["2001:0:53aa:64c:0:0:0:1", "a Teredo tunnel address (RFC 4380)"],
    ["64:ff9b::192.168.0.1", "a NAT64 form of a private address (RFC 1918)"],
  ])("%s is refused: %s", (address, what) => {
    expect(addressRefusal(address)).toBe(what);
  });

  test.each(["8.8.8.8", "2606:4700:4700::1111", "2001:4860:4860::8888"])("%s may be called", (address) => {
    expect(addressRefusal(address)).toBeNull();
  });
});

describe("postWebhook", () => {
  test("a public name that resolves to loopback is refused at connect time, and nothing is sent", async () => {
    receiver = await startReceiver(204);
    const resolve = resolver(["127.0.0.1"]);
    const sent = await postWebhook(post(`http://hooks.example.com:${receiver.port}/hook`), { guard: true, resolve });
    expect(sent).toEqual({ error: "not sent: hooks.example.com resolves to 127.0.0.1, a loopback address" });
    expect(resolve.calls).toEqual(["hooks.example.com"]);
    expect(receiver.received).toEqual([]);
  });

  test("one private answer among public ones refuses it too (rebinding through several records)", async () => {
    const sent = await postWebhook(post("https://hooks.example.com/hook"), { guard: true, resolve: resolver(["93.184.216.34", "169.254.169.254"]) });
    expect(sent).toEqual({ error: "not sent: hooks.example.com resolves to 169.254.169.254, a cloud metadata address" });
  });

  test("localhost through the system resolver: refused by what it resolves to", async () => {
    receiver = await startReceiver(204);
    const sent = await postWebhook(post(`http://localhost:${receiver.port}/hook`), { guard: true });
    expect(sent).toMatchObject({ error: expect.stringMatching(/^not sent: localhost resolves to (127\.0\.0\.1|::1), a loopback address$/) as unknown });
    expect(receiver.received).toEqual([]);
  });

  test("the connection goes to the address that was resolved, once: a second answer is never asked for", async () => {
    // private addresses allowed (guard off), as a self-hosted farm: the name reaches the receiver only through the pin
    receiver = await startReceiver(204);
    const resolve = resolver(["127.0.0.1"], ["10.9.9.9"]);
    const sent = await postWebhook(post(`http://hooks.example.com:${receiver.port}/hook?x=1`), { guard: false, resolve });
    expect(sent).toEqual({ status: 204 });
    expect(resolve.calls).toEqual(["hooks.example.com"]);
    expect(receiver.received).toMatchObject([{ method: "POST", path: "/hook?x=1", body: '{"ok":true}', headers: { host: `hooks.example.com:${receiver.port}` } }]);
  });

  test("a name that does not resolve, and a receiver that never answers, are attempts that failed", async () => {
    const failing: Resolver = () => Promise.reject(new Error("getaddrinfo ENOTFOUND nowhere.example"));
    expect(await postWebhook(post("https://nowhere.example/"), { guard: true, resolve: failing })).toEqual({
      error: "not sent: nowhere.example does not resolve (getaddrinfo ENOTFOUND nowhere.example)",
    });
    receiver = await startReceiver("hang");
    expect(await postWebhook(post(receiver.url, 200), { guard: false })).toEqual({ error: "no answer within 200 ms" });
  });
});
