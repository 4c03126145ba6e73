// Where a completion webhook may point: every refused and allowed address, at set time and at delivery time,
// with and without FARMHAND_WEBHOOK_ALLOW_PRIVATE=1; and setWebhook's token bucket per client key.
import { afterEach, describe, expect, test, vi } from "vitest";
import { api, internal } from "../../convex/_generated/api";
import { ALLOW_PRIVATE_ENV } from "../../convex/webhooks/webhookAddress";
import { WEBHOOK_RATE } from "../../convex/webhooks/webhookRateLimit";
import { enrollWorker, expectCode, newFarm, snapshot } from "./setup";
import { checkConsistency } from "./sweep/consistency";

const REFUSED: Array<[url: string, why: string]> = [
  ["http://127.0.0.1/hook", "loopback"],
  ["http://127.255.0.9:8080/", "loopback /8"],
  ["http://2130706433/", "loopback as a decimal number"],
  ["http://017700000001/", "loopback in octal"],
  ["http://0x7f.0x0.0x0.0x1/", "loopback in hex"],
  ["http://0x7f.1/", "loopback, short hex form"],
  ["http://0/", "0.0.0.0"],
  ["http://[::1]/", "IPv6 loopback"],
  ["http://[::]/", "IPv6 unspecified"],
  ["http://[::ffff:127.0.0.1]/", "IPv4-mapped loopback"],
  ["http://[::ffff:8.8.8.8]/", "IPv4-mapped, even public"],
  ["http://10.0.0.1/", "RFC 1918 10/8"],
  ["http://172.16.0.1/", "RFC 1918 172.16/12"],
  ["http://172.31.255.255/", "RFC 1918 172.16/12, last"],
  ["http://192.168.1.1/", "RFC 1918 192.168/16"],
  ["http://100.64.0.1/", "CGNAT"],
  ["http://100.127.255.254/", "CGNAT, last"],
  ["http://169.254.169.254/latest/meta-data/", "cloud metadata"],
  ["http://169.254.1.1/", "link-local"],
  ["http://[fd00:ec2::254]/", "AWS IPv6 metadata"],
  ["http://[fc00::1]/", "RFC 4193 unique local"],
  ["http://[fd12:3456::1]/", "RFC 4193 unique local, fd"],
  ["http://[fe80::1]/", "IPv6 link-local"],
  ["http://[ff02::1]/", "IPv6 multicast"],
  ["http://[64:ff9b::a00:1]/", "NAT64 of 10.0.0.1"],
  ["http://[2002:a00:1::]/", "6to4 of 10.0.0.1"],
  ["http://[64:ff9b:1::808:808]/", "local-use NAT64 (RFC 8215), even of a public address"],
  ["http://[64:ff9b:1:ffff::1]/", "local-use NAT64, last of the /48"],
  ["http://[::ffff:0:808:808]/", "IPv4-translated (::ffff:0:0:0/96)"],
  ["http://[::ffff:0:7f00:1]/", "IPv4-translated loopback"],
  ["http://[2001::1]/", "Teredo (2001::/32)"],
  ["http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/", "Teredo, a real-looking one"],
  ["http://224.0.0.1/", "multicast"],
  ["http://255.255.255.255/", "broadcast"],
  ["http://localhost:3000/hook", "localhost"],
  ["http://LOCALHOST./", "localhost, upper case with a dot"],
  ["http://api.localhost/", "*.localhost"],
  ["http://printer.local/", "mDNS .local"],
  ["http://metadata.google.internal/", "GCP metadata name"],
  ["http://intranet/", "single-label name"],
];

const ALLOWED = [
  "https://hooks.example.com/farm?x=1",
  "http://example.org:8080/",
  "https://8.8.8.8/",
  "http://172.15.255.255/",
  "http://172.32.0.1/",
  "http://100.63.255.255/",
  "http://100.128.0.1/",
  "http://192.169.0.1/",
  "http://[2606:4700:4700::1111]/",
  "http://[64:ff9b::808:808]/",
  "http://[2001:4860:4860::8888]/",
  "http://[2001:1::1]/",
  "https://xn--bcher-kva.example/",
];

const savedAllow = process.env[ALLOW_PRIVATE_ENV];
afterEach(() => {
  vi.useRealTimers();
  if (savedAllow === undefined) delete process.env[ALLOW_PRIVATE_ENV];
  else process.env[ALLOW_PRIVATE_ENV] = savedAllow;
});

describe("webhook addresses", () => {
  test.each(REFUSED)("refuses %s (%s) with address_refused, changing nothing", async (url) => {
    delete process.env[ALLOW_PRIVATE_ENV];
    const farm = await newFarm();
    const before = await snapshot(farm.t);
    await expectCode(farm.t.mutation(api.jobs.setWebhook, { clientKey: farm.clientKey, url }), "address_refused");
    expect(await snapshot(farm.t)).toEqual(before);
    // A self-hosted farm that allows private addresses takes it.
    process.env[ALLOW_PRIVATE_ENV] = "1";
    expect((await farm.t.mutation(api.jobs.setWebhook, { clientKey: farm.clientKey, url })).secret).toMatch(/^fh_h_/);
  });

  test("allows public addresses and names", async () => {
    delete process.env[ALLOW_PRIVATE_ENV];
    const farm = await newFarm();
    for (const url of ALLOWED) {
      vi.useFakeTimers();
      vi.advanceTimersByTime(WEBHOOK_RATE.refillMs); // keep the bucket from running dry
      expect((await farm.t.mutation(api.jobs.setWebhook, { clientKey: farm.clientKey, url })).secret, url).toMatch(/^fh_h_/);
    }
  });

  test("only the value 1 allows private addresses", async () => {
    process.env[ALLOW_PRIVATE_ENV] = "true";
    const farm = await newFarm();
    await expectCode(farm.t.mutation(api.jobs.setWebhook, { clientKey: farm.clientKey, url: "http://127.0.0.1/" }), "address_refused");
  });

  test("a private URL stored while allowed is not sent once the deployment stops allowing it: the delivery fails, saying why", async () => {
    vi.useFakeTimers();
    process.env[ALLOW_PRIVATE_ENV] = "1";
    const farm = await newFarm();
    const worker = await enrollWorker(farm);
    await farm.t.mutation(api.jobs.setWebhook, { clientKey: farm.clientKey, url: "http://169.254.169.254/latest" });
    const jobId = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x", maxAttempts: 1 });
    const [c] = await farm.t.mutation(api.workers.claim, { apiKey: worker.apiKey, capabilities: worker.capabilities });
    await farm.t.mutation(api.workers.complete, { apiKey: worker.apiKey, leaseId: c.leaseId, result: 1 });
    delete process.env[ALLOW_PRIVATE_ENV];
    const [row] = await farm.t.run(async (ctx) => await ctx.db.query("webhookDeliveries").collect());
    expect(row.jobId).toBe(jobId);
    expect(await farm.t.mutation(internal.webhooks.beginAttempt, { deliveryId: row._id })).toBeNull();
    const after = await farm.t.run(async (ctx) => await ctx.db.get(row._id));
    expect(after?.state).toBe("failed");
    expect(after?.attempts).toEqual([expect.objectContaining({ error: "not sent: 169.254.169.254 is a cloud metadata address", jobStatus: "succeeded" })]);
    expect(await checkConsistency(farm.t)).toEqual([]);
  });
});

describe("setWebhook's rate limit", () => {
  test(`allows a burst of ${WEBHOOK_RATE.burst} per client key, then one every ${WEBHOOK_RATE.refillMs} ms; removing is free; keys are separate`, async () => {
    vi.useFakeTimers();
    const farm = await newFarm();
    const url = "https://hooks.example.com/a";
    for (let i = 0; i < WEBHOOK_RATE.burst; i++) await farm.t.mutation(api.jobs.setWebhook, { clientKey: farm.clientKey, url });
    const before = await snapshot(farm.t);
    await expectCode(farm.t.mutation(api.jobs.setWebhook, { clientKey: farm.clientKey, url }), "rate_limited");
    expect(await snapshot(farm.t)).toEqual(before);
    // Removing the webhook is never limited.
    expect(await farm.t.mutation(api.jobs.setWebhook, { clientKey: farm.clientKey, url: null })).toEqual({ secret: null });
    // Another key of the same org has its own bucket.
    const { key: other } = await farm.t.mutation(internal.admin.createClientKey, { orgId: farm.orgId, name: "other" });
    expect((await farm.t.mutation(api.jobs.setWebhook, { clientKey: other, url })).secret).toMatch(/^fh_h_/);
    vi.advanceTimersByTime(WEBHOOK_RATE.refillMs - 100);
    await expectCode(farm.t.mutation(api.jobs.setWebhook, { clientKey: farm.clientKey, url }), "rate_limited");
    vi.advanceTimersByTime(100);
    expect((await farm.t.mutation(api.jobs.setWebhook, { clientKey: farm.clientKey, url })).secret).toMatch(/^fh_h_/);
    await expectCode(farm.t.mutation(api.jobs.setWebhook, { clientKey: farm.clientKey, url }), "rate_limited");
    expect(await checkConsistency(farm.t)).toEqual([]);
  });
});
