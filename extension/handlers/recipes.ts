import { readFileSync } from "node:fs";
import { isAbsolute, resolve, dirname } from "node:path";
import type { Recipe } from "./impl/recipe";

// recipe.<name> is advertised as a capability, so names follow the server's capability alphabet.
const NAME = /^[a-z0-9][a-z0-9_-]{0,56}$/;

/** The job type a recipe serves. */
export function recipeType(name: string): string {
  return `recipe.${name}`;
}

/**
 * Validate recipes declared by the machine's owner: `{ "name": { "command", "args"?, "cwd"?, "env"?, "timeoutMs"? } }`
 * (optionally wrapped as `{ "recipes": { ... } }`). Throws one error listing every problem.
 */
export function parseRecipes(value: unknown, baseDir = process.cwd()): Recipe[] {
  const root = isPlainObject(value) && isPlainObject(value.recipes) ? value.recipes : value;
  if (!isPlainObject(root)) throw new Error("recipes must be an object mapping names to { command, args? }");
  const problems: string[] = [];
  const recipes: Recipe[] = [];
  for (const [name, raw] of Object.entries(root)) {
    const where = `recipe "${name}"`;
    if (!NAME.test(name)) problems.push(`${where}: a name is lowercase letters, digits, _ and - (max 57)`);
    if (!isPlainObject(raw)) {
      problems.push(`${where}: must be an object with a "command"`);
      continue;
    }
    const { command, args, cwd, env, timeoutMs, description } = raw;
    if (typeof command !== "string" || !command.trim()) problems.push(`${where}: "command" must be a non-empty string`);
    if (args !== undefined && !(Array.isArray(args) && args.every((a) => typeof a === "string"))) {
      problems.push(`${where}: "args" must be an array of strings`);
    }
    if (cwd !== undefined && typeof cwd !== "string") problems.push(`${where}: "cwd" must be a string`);
    if (env !== undefined && !(isPlainObject(env) && Object.values(env).every((v) => typeof v === "string"))) {
      problems.push(`${where}: "env" must map names to strings`);
    }
    if (timeoutMs !== undefined && !(typeof timeoutMs === "number" && Number.isInteger(timeoutMs) && timeoutMs > 0)) {
      problems.push(`${where}: "timeoutMs" must be a positive whole number`);
    }
    recipes.push({
      name,
      command: command as string,
      args: args as string[] | undefined,
      cwd: typeof cwd === "string" ? (isAbsolute(cwd) ? cwd : resolve(baseDir, cwd)) : undefined,
      env: env as Record<string, string> | undefined,
      timeoutMs: timeoutMs as number | undefined,
      description: typeof description === "string" ? description : undefined,
    });
  }
  if (problems.length) throw new Error(`invalid recipes:\n  ${problems.join("\n  ")}`);
  return recipes;
}

/** Read recipes from a JSON file (relative cwd's resolve against the file's folder). */
export function loadRecipesFile(path: string): Recipe[] {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    throw new Error(`cannot read recipes file ${path}: ${(e as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new Error(`recipes file ${path} is not valid JSON: ${(e as Error).message}`);
  }
  return parseRecipes(json, dirname(resolve(path)));
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
