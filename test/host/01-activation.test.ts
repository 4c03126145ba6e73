import * as assert from "node:assert/strict";
import { describe, it } from "mocha";
import * as vscode from "vscode";
import { activateFarmhand, EXTENSION_ID, expectsRemoteWindow, waitForValue } from "./farmhand";

describe("Farmhand in a real extension host", () => {
  it("activates on its own once the window has started, without the \"*\" activation event", async () => {
    const extension = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(extension, `${EXTENSION_ID} is not loaded from the development path`);
    const events = (extension.packageJSON as { activationEvents?: string[] }).activationEvents ?? [];
    assert.ok(!events.includes("*"), `activationEvents must not include "*": ${JSON.stringify(events)}`);
    // Nothing here calls activate(): the window's own startup must do it.
    await waitForValue("isActive without an explicit activate()", () => extension.isActive, true, 15_000);
  });

  it("activates and exports getState()", async () => {
    const api = await activateFarmhand();
    assert.equal(vscode.extensions.getExtension(EXTENSION_ID)?.isActive, true);
    assert.equal(typeof api.getState().donating, "boolean");
  });

  it("registers farmhand.toggle, farmhand.join and farmhand.showLog", async () => {
    await activateFarmhand();
    const commands = new Set(await vscode.commands.getCommands(true));
    for (const id of ["farmhand.toggle", "farmhand.join", "farmhand.showLog"]) {
      assert.ok(commands.has(id), `command ${id} is not registered`);
    }
  });

  if (expectsRemoteWindow()) {
    it("runs as a workspace extension in a remote (code-server) window", () => {
      assert.ok(vscode.env.remoteName, "env.remoteName is not set: this is not the remote extension host");
      assert.equal(vscode.extensions.getExtension(EXTENSION_ID)?.extensionKind, vscode.ExtensionKind.Workspace);
    });
  } else {
    it("runs as a UI extension in a local (desktop) window", () => {
      assert.equal(vscode.env.remoteName, undefined);
      assert.equal(vscode.extensions.getExtension(EXTENSION_ID)?.extensionKind, vscode.ExtensionKind.UI);
    });
  }

  it("sees the test runner's environment variables", () => {
    assert.equal(process.env.FARMHAND_HOST_TEST, "1", "the runner's FARMHAND_HOST_TEST did not reach the extension host");
  });
});
