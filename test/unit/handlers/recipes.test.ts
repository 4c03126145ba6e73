import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadRecipesFile, parseRecipes } from "../../../extension/handlers/recipes";
import { ProcessPool } from "../../../extension/handlers/processPool";
import type { Recipe } from "../../../extension/handlers/impl/recipe";
import { fakeCtx } from "./fakeCtx";

const dir = mkdtempSync(join(tmpdir(), "farmhand-recipes-"));

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Polls `read` until it returns a value (the test's own time limit ends a wait that never does). */
async function waitFor<T>(read: () => T | undefined): Promise<T> {
  for (;;) {
    const value = read();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
function script(name: string, body: string): Recipe {
  const file = join(dir, `${name}.js`);
  writeFileSync(file, body);
  return { name, command: process.execPath, args: [file] };
}

// No test here waits on the clock: they wait for what the recipe says or does. The time limit is for a busy machine.
describe("recipes", { timeout: 60_000 }, () => {
  // Normal priority: these tests are about recipes, not politeness, and at the lowest priority a child on a busy
  // machine gets next to no CPU (processPool.test.ts checks the lowered priority).
  const pool = new ProcessPool({ graceMs: 500, niceness: 0 });
  afterAll(() => pool.close());
  const run = (recipe: Recipe, payload: unknown, f = fakeCtx()) => pool.run({ builtin: "recipe", options: recipe }, payload, f.ctx);

  it("passes the job args on stdin, reports progress lines, streams other lines, returns the last JSON line", async () => {
    const recipe = script(
      "double",
      `let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const a=JSON.parse(s);
       console.log(JSON.stringify({progress:0.5,status:"half"}));console.log("plain text line");
       console.log(JSON.stringify({doubled:a.x*2}));});`,
    );
    const f = fakeCtx();
    expect(await run(recipe, { x: 21 }, f)).toEqual({ doubled: 42 });
    expect(f.progress).toEqual([[0.5, "half"]]);
    expect(f.output()).toBe("plain text line\n");
  });

  it("fails clearly, without retry, when the last line is not JSON", async () => {
    const recipe = script("chatty", `console.log(JSON.stringify({progress:1}));console.log("done!");`);
    await expect(run(recipe, {})).rejects.toMatchObject({
      message: 'recipe "chatty" must print its result as JSON on its last line of output; it printed "done!"',
      retryable: false,
    });
  });

  it("fails when the command exits non-zero, with the end of its stderr", async () => {
    const recipe = script("sad", `console.error("disk full");process.exit(3);`);
    await expect(run(recipe, {})).rejects.toMatchObject({ message: 'recipe "sad" exited with code 3: disk full', retryable: true });
  });

  it("fails when the command does not exist", async () => {
    const failing = run({ name: "ghost", command: "/no/such/binary" }, {});
    await expect(failing).rejects.toThrow('recipe "ghost" could not start `/no/such/binary`: spawn /no/such/binary ENOENT');
    await expect(failing).rejects.toMatchObject({ retryable: false });
  });

  it("stops the command when the job is canceled", async () => {
    // it would answer only after 10 minutes, far beyond the test's time limit
    const recipe = script("slow", `console.log("pid " + process.pid); setTimeout(()=>console.log("{}"),600000);`);
    const f = fakeCtx();
    const running = run(recipe, {}, f);
    const pid = await waitFor(() => Number(/pid (\d+)/.exec(f.output())?.[1]) || undefined);
    f.controller.abort(new Error("canceled"));
    await expect(running).rejects.toThrow("canceled");
    expect(await waitFor(() => (isAlive(pid) ? undefined : true))).toBe(true);
  });

  it.skipIf(process.platform === "win32")("ends the recipe's whole process group on cancel: a sleeping grandchild does not survive", async () => {
    // The recipe starts a grandchild that ignores SIGTERM, reports its pid, and waits for it.
    const recipe: Recipe = { name: "family", command: "sh", args: ["-c", `sh -c 'trap "" TERM; sleep 300' & echo "grandchild $!"; wait`] };
    const f = fakeCtx();
    const running = run(recipe, {}, f);
    const grandchild = await waitFor(() => Number(/grandchild (\d+)/.exec(f.output())?.[1]) || undefined);
    expect(isAlive(grandchild)).toBe(true);
    f.controller.abort(new Error("canceled"));
    await expect(running).rejects.toThrow("canceled");
    // TERM reaches the group at once; the grandchild ignores it and is killed after the grace period (500 ms).
    expect(await waitFor(() => (isAlive(grandchild) ? undefined : true))).toBe(true);
  });

  it("takes a result line that ends without a newline", async () => {
    const recipe = script("terse", `process.stdout.write(JSON.stringify({progress:0.5}) + "\\n"); process.stdout.write('{"ok":1}');`);
    const f = fakeCtx();
    expect(await run(recipe, {}, f)).toEqual({ ok: 1 });
    expect(f.progress).toEqual([[0.5, undefined]]);
  });

  it("parses a recipes file and rejects bad declarations with every problem listed", () => {
    const file = join(dir, "recipes.json");
    writeFileSync(file, JSON.stringify({ recipes: { render: { command: "blender", args: ["-b"], cwd: "work" } } }));
    expect(loadRecipesFile(file)).toEqual([
      { name: "render", command: "blender", args: ["-b"], cwd: join(dir, "work"), env: undefined, timeoutMs: undefined, description: undefined },
    ]);
    expect(() => parseRecipes({ "bad name": { command: "" }, ok: { command: "x", args: "y", timeoutMs: -1 } })).toThrow(
      'invalid recipes:\n  recipe "bad name": a name is lowercase letters, digits, _ and - (max 57)\n  recipe "bad name": "command" must be a non-empty string\n' +
        '  recipe "ok": "args" must be an array of strings\n  recipe "ok": "timeoutMs" must be a positive whole number',
    );
    expect(() => parseRecipes([1])).toThrow("recipes must be an object");
    writeFileSync(join(dir, "broken.json"), "{nope");
    expect(() => loadRecipesFile(join(dir, "broken.json"))).toThrow(/recipes file .*broken.json is not valid JSON/);
    expect(() => loadRecipesFile(join(dir, "missing.json"))).toThrow(/cannot read recipes file/);
  });
});
