import { createServer } from "node:net";
import { ConvexHttpClient } from "convex/browser";
import { ConvexError } from "convex/values";
import { describe, expect, it } from "vitest";
import { api } from "../../../convex/_generated/api";
import { describeError, errorMessage, isKeyError } from "../../../extension/worker/errors";
import { decorate } from "../../../extension/worker/farmClient";
import { recordingFarm } from "./recordingFarm";

/** A ConvexError as the Convex clients raise it: the server's data, and the client's own wrapper text as message. */
function serverError(code: string, message: string): ConvexError<{ code: string; message: string }> {
  const error = new ConvexError<{ code: string; message: string }>({ code, message });
  error.message = `[Request ID: 8f1c2d] Server Error\nUncaught ConvexError: ${JSON.stringify({ code, message })}\n    at handler (../convex/workers.ts:42:7)\n`;
  return error;
}

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe("describeError", () => {
  it.each([
    ["revoked", "refused"],
    ["bad_key", "refused"],
    ["token_expired", "refused"],
    ["token_used", "refused"],
    ["forbidden", "notAllowed"],
    ["invalid_argument", "invalid"],
    ["too_large", "invalid"],
    ["not_found", "notFound"],
    ["stale_lease", "staleLease"],
    ["something_new", "failed"],
  ])("reads the code %s as %s, with the server's own message and none of the client's wrapper", (code, kind) => {
    const described = describeError(serverError(code, "This worker key has been revoked"));
    expect(described).toEqual({ kind, code, message: "This worker key has been revoked" });
  });

  it("decides by the code, never by the text", () => {
    expect(describeError(new Error("this worker's key was revoked")).kind).toBe("failed");
    expect(isKeyError(new Error("rejected this worker's key (revoked)"))).toBe(false);
    expect(isKeyError(serverError("revoked", "anything at all"))).toBe(true);
  });

  it("reads a connection that never reached the server as unreachable, from the real client's error", async () => {
    const client = new ConvexHttpClient(`http://127.0.0.1:${await closedPort()}`);
    const error = await client.mutation(api.workers.enroll, { token: "fh_e_x", name: "n", machineId: "m", capabilities: [] }).catch((e: unknown) => e);
    expect(describeError(error)).toEqual({ kind: "unreachable", code: "ECONNREFUSED", message: "the farm could not be reached (ECONNREFUSED)" });
  });

  it("strips the client's wrapping from an error without a code", () => {
    const wrapped = new Error("[Request ID: 77] Server Error\nUncaught Error: Could not find public function for 'workers:enroll'\n    at x (y.js:1:1)");
    expect(describeError(wrapped)).toEqual({ kind: "failed", message: "Could not find public function for 'workers:enroll'" });
    expect(errorMessage("plain text")).toBe("plain text");
    expect(errorMessage(new TypeError("bad"))).toBe("bad");
  });
});

describe("decorate", () => {
  it("shows every failed call and subscription error to one hook, and the caller still gets the error", async () => {
    const farm = recordingFarm({
      claim: () => Promise.reject(serverError("revoked", "This worker key has been revoked")),
      heartbeat: () => Promise.reject(serverError("stale_lease", "lease moved on")),
      output: () => Promise.reject(new Error("boom")),
    });
    const seenByHook: string[] = [];
    const watched = decorate(farm.client, { onError: (name, e) => seenByHook.push(`${name}: ${describeError(e).kind}`) });
    const seen: unknown[] = [];
    watched.doorbell(() => undefined, (e) => seen.push(e));
    farm.bellError(serverError("bad_key", "Unknown worker key"));
    await expect(watched.claim({ capabilities: ["demo.echo"], max: 1 })).rejects.toMatchObject({ data: { code: "revoked" } });
    await expect(watched.heartbeat({ leaseId: "l1" })).rejects.toMatchObject({ data: { code: "stale_lease" } });
    await expect(watched.output({ leaseId: "l1", chunk: "x" })).rejects.toThrow("boom");
    await watched.presence({});
    expect(seenByHook).toEqual(["doorbell: refused", "claim: refused", "heartbeat: staleLease", "output: failed"]);
    expect(seen).toHaveLength(1);
  });

  it("rewrites a call's arguments on the way out, and only those it is asked to", async () => {
    const farm = recordingFarm();
    const budgeted = decorate(farm.client, { args: (name, args) => (name === "release" ? { ...args, slots: 2 } : args) });
    await budgeted.release({ leaseId: "l1" });
    await budgeted.ready({ capabilities: ["a"], slots: 1 });
    expect(farm.calls).toEqual([
      { name: "release", args: { leaseId: "l1", slots: 2 } },
      { name: "ready", args: { capabilities: ["a"], slots: 1 } },
    ]);
  });
});
