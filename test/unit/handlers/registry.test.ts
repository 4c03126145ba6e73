import { describe, expect, it } from "vitest";
import { HandlerRegistry } from "../../../extension/handlers/registry";

const noop = () => Promise.resolve(null);

describe("HandlerRegistry", () => {
  it("advertises exactly the registered handlers' capabilities and forgets removed ones", async () => {
    const r = new HandlerRegistry();
    let changes = 0;
    r.onChange(() => changes++);
    const removeA = r.register({ type: "a.job", run: noop });
    r.register({ type: "b.job", run: noop, capabilities: () => ["b.job", "gpu:1", "Bad Cap"] });
    r.register({ type: "c.job", run: noop, capabilities: () => Promise.reject(new Error("probe failed")) });
    expect(await r.capabilities()).toEqual(["a.job", "b.job", "gpu:1"]);
    removeA();
    expect(r.get("a.job")).toBeUndefined();
    expect(await r.capabilities()).toEqual(["b.job", "gpu:1"]);
    expect(r.types()).toEqual(["b.job", "c.job"]);
    expect(changes).toBe(4);
  });

  it("rejects duplicates and malformed handlers", () => {
    const r = new HandlerRegistry();
    r.register({ type: "x", run: noop });
    expect(() => r.register({ type: "x", run: noop })).toThrow('a handler for "x" is already registered');
    expect(() => r.register({ type: "has space", run: noop })).toThrow('invalid handler type "has space"');
    expect(() => r.register({ type: "Upper.Case", run: noop })).toThrow("use lowercase letters, digits and . _ : - (max 64)");
    expect(() => r.register({ type: "y" } as never)).toThrow("a handler needs a run(payload, ctx) function");
  });
});
