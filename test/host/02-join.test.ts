import * as assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { before, describe, it } from "mocha";
import * as vscode from "vscode";
import { activateFarmhand, joinedContextKey, testFarm, waitForValue, type FarmhandApi } from "./farmhand";

const join = (url: string, token: string) => Promise.resolve(vscode.commands.executeCommand("farmhand.join", { url, token }));

describe("farmhand.join (scripted, against the loopback test farm)", () => {
  let api: FarmhandApi;

  before(async () => {
    api = await activateFarmhand();
  });

  it("starts unjoined: state, context key and status say so", async () => {
    assert.equal(api.getState().joined, false);
    assert.equal(api.getState().status.kind, "notJoined");
    assert.equal(await joinedContextKey(), false);
  });

  it("refuses a key the farm does not know, with a clear error, and stays unjoined", async () => {
    await assert.rejects(join(testFarm().url, "fh_w_not-a-real-key"), /could not join the farm/);
    assert.equal(api.getState().joined, false);
  });

  it("refuses a URL that is not http(s)", async () => {
    await assert.rejects(join("ftp://farm.invalid", testFarm().workerKey), /not an http\(s\) URL/);
    assert.equal(api.getState().joined, false);
  });

  it("refuses a malformed and an unknown enrollment token, saying what to do next", async () => {
    // It starts with fh_e_, so say what is wrong with it: its length, or characters a token never has.
    await assert.rejects(join(testFarm().url, "fh_e_thisisnotarealtoken"), /could not join the farm: An enrollment token has 43 characters after fh_e_; this one has 19: copy it again in full/);
    await assert.rejects(join(testFarm().url, `fh_e_${"A".repeat(42)}!`), /could not join the farm: An enrollment token has only letters, digits, "-" and "_" after fh_e_; this one also has "!"/);
    const unknown = `fh_e_${"A".repeat(43)}`;
    await assert.rejects(join(testFarm().url, unknown), /Unknown enrollment token — check the token or key, or ask your operator for a new one/);
    assert.equal(api.getState().joined, false);
  });

  it("says an address that is another web server does not answer like a Convex deployment", async () => {
    const server = createServer((_req, res) => res.writeHead(405, { "Content-Type": "text/plain" }).end("Unsupported method POST"));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = server.address() as AddressInfo;
      await assert.rejects(join(`http://127.0.0.1:${port}`, `fh_e_${"A".repeat(43)}`), /could not join the farm: http:\/\/127\.0\.0\.1:\d+ does not answer like a Convex deployment/);
      assert.equal(api.getState().joined, false);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it("refuses an expired enrollment token: ask the operator for a new one", async () => {
    await assert.rejects(join(testFarm().url, testFarm().expiredToken), /has expired — ask your operator for a new token/);
    assert.equal(api.getState().joined, false);
    assert.equal(api.getState().status.kind, "notJoined");
  });

  it("joins with an existing worker key: state, context key and status follow", async () => {
    const { url, workerKey } = testFarm();
    await join(url, workerKey);
    assert.equal(api.getState().joined, true);
    assert.equal(api.getState().status.kind, "off");
    assert.equal(api.getState().farmUrl, url);
    await waitForValue("context key farmhand.joined", joinedContextKey, true);
  });

  it("joins with an enrollment token, which makes this machine a worker of its own", async () => {
    const { url, joinToken } = testFarm();
    await join(url, joinToken);
    assert.equal(api.getState().joined, true);
    assert.equal(api.getState().status.kind, "off");
    assert.equal(api.getState().farmUrl, url);
    await waitForValue("context key farmhand.joined", joinedContextKey, true);
  });

  it("refuses the same enrollment token a second time (one token, one machine) and stays joined", async () => {
    const { url, joinToken } = testFarm();
    await assert.rejects(join(url, joinToken), /already been used — each token joins one machine; ask your operator for another/);
    assert.equal(api.getState().joined, true);
    assert.equal(api.getState().farmUrl, url);
  });
});
