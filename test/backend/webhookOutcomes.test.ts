// What one delivery attempt makes of the receiver's answer (issue 25): only a 2xx delivers; a redirect is
// neither success nor followed; 4xx, 5xx and no answer within the timeout are retried later. The receiver is a real
// HTTP server on this machine, so the farm allows private addresses here (FARMHAND_WEBHOOK_ALLOW_PRIVATE=1).
import { afterEach, describe, expect, test, vi } from "vitest";
import { api, internal } from "../../convex/_generated/api";
import { ALLOW_PRIVATE_ENV } from "../../convex/webhooks/webhookAddress";
import { WEBHOOK } from "../../convex/webhooks/webhooks";
import { checkConsistency } from "./sweep/consistency";
import { enrollWorker, newFarm, type Farm } from "./setup";
import { startReceiver } from "./webhookReceiver";

let receiver: Awaited<ReturnType<typeof startReceiver>> | undefined;

async function receiving(answer: number | "hang") {
  receiver = await startReceiver(answer);
  return receiver;
}

afterEach(async () => {
  await receiver?.close();
  receiver = undefined;
  vi.unstubAllEnvs();
  vi.useRealTimers();
});

/** A farm with a webhook (to a receiver answering `answer`) on its client key and one succeeded job whose delivery is pending. */
async function endedJob(answer: number | "hang") {
  // Only timers and the clock are fake: the delivery's own timeout runs on them, the rest of the event loop is real.
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] });
  vi.stubEnv(ALLOW_PRIVATE_ENV, "1");
  const { url, received } = await receiving(answer);
  const farm = await newFarm();
  const worker = await enrollWorker(farm);
  await farm.t.mutation(api.jobs.setWebhook, { clientKey: farm.clientKey, url });
  const jobId = await farm.t.mutation(api.jobs.submit, { clientKey: farm.clientKey, type: "x" });
  const [c] = await farm.t.mutation(api.workers.claim, { apiKey: worker.apiKey, capabilities: worker.capabilities });
  expect(c.jobId).toBe(jobId);
  await farm.t.mutation(api.workers.complete, { apiKey: worker.apiKey, leaseId: c.leaseId, result: 1 });
  const [row] = await farm.t.run(async (ctx) => await ctx.db.query("webhookDeliveries").collect());
  return { farm, deliveryId: row._id, received };
}

const deliveryRow = (farm: Farm) => farm.t.run(async (ctx) => (await ctx.db.query("webhookDeliveries").collect())[0]);
const pendingRuns = (farm: Farm) =>
  farm.t.run(async (ctx) =>
    (await ctx.db.system.query("_scheduled_functions").collect()).filter((s) => s.name === "webhookDelivery:deliver" && s.state.kind === "pending"),
  );

describe("a webhook attempt's outcome", () => {
  test.each([200, 201, 204, 299])("%i: delivered, nothing more sent", async (status) => {
    const { farm, deliveryId, received } = await endedJob(status);
    const runsBefore = (await pendingRuns(farm)).length;
    await farm.t.action(internal.webhookDelivery.deliver, { deliveryId });
    expect(received.map((r) => [r.method, r.path])).toEqual([["POST", "/hook"]]);
    const row = await deliveryRow(farm);
    expect(row).toMatchObject({ state: "delivered", attempts: [expect.objectContaining({ status })] });
    expect(row.nextAt).toBeUndefined();
    expect((await pendingRuns(farm)).length).toBe(runsBefore);
    expect(await checkConsistency(farm.t)).toEqual([]);
  });

  test.each([
    [301, "a redirect"],
    [302, "a redirect"],
    [307, "a redirect"],
    [308, "a redirect"],
    [400, "a client error"],
    [404, "a client error"],
    [410, "a client error"],
    [500, "a server error"],
    [503, "a server error"],
  ])("%i (%s): not delivered, not followed, retried later", async (status) => {
    const { farm, deliveryId, received } = await endedJob(status);
    const runsBefore = (await pendingRuns(farm)).length;
    await farm.t.action(internal.webhookDelivery.deliver, { deliveryId });
    // one request, to the webhook's URL; the redirect's target is never asked
    expect(received.map((r) => [r.method, r.path])).toEqual([["POST", "/hook"]]);
    const row = await deliveryRow(farm);
    expect(row).toMatchObject({ state: "pending", attempts: [expect.objectContaining({ status })] });
    expect(row.nextAt! - Date.now()).toBeGreaterThan(0);
    expect(row.nextAt! - Date.now()).toBeLessThanOrEqual(WEBHOOK.retryBaseMs);
    expect((await pendingRuns(farm)).length).toBe(runsBefore + 1);
    expect(await checkConsistency(farm.t)).toEqual([]);
  });

  test("no answer within the timeout: the request is aborted, the attempt says so, retried later", async () => {
    const { farm, deliveryId, received } = await endedJob("hang");
    const attempt = farm.t.action(internal.webhookDelivery.deliver, { deliveryId });
    await vi.waitFor(() => expect(received).toHaveLength(1), { interval: 1 });
    expect((await deliveryRow(farm)).state).toBe("sending");
    vi.advanceTimersByTime(WEBHOOK.timeoutMs);
    await attempt;
    const row = await deliveryRow(farm);
    expect(row).toMatchObject({ state: "pending", attempts: [{ error: `no answer within ${WEBHOOK.timeoutMs} ms` }] });
    expect(row.attempts[0].status).toBeUndefined();
    expect(row.nextAt! - Date.now()).toBeLessThanOrEqual(WEBHOOK.retryBaseMs);
    expect(await checkConsistency(farm.t)).toEqual([]);
  });
});
