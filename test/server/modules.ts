// Builds the `modules` map convex-test expects (normally made by Vite's import.meta.glob), so the server
// also runs outside vitest. convex-test finds the functions root from the key that contains "_generated".
import { existsSync, readdirSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { GenericSchema, SchemaDefinition } from "convex/server";

/** What a function module exports, by name. */
export type ModuleExports = Record<string, unknown>;
export type ModuleMap = Record<string, () => Promise<ModuleExports>>;
/** Any app's schema: the server serves whichever folder it is given. */
export type AnySchema = SchemaDefinition<GenericSchema, boolean>;

const functionFile = /\.(ts|js|mts|mjs)$/;

function listFunctionFiles(dir: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) files.push(...listFunctionFiles(path));
    else if (functionFile.test(entry) && !entry.endsWith(".d.ts") && !/\.test\./.test(entry)) files.push(path);
  }
  return files;
}

export function modulesFromDirectory(convexDir: string): ModuleMap {
  const root = resolve(convexDir);
  if (!existsSync(root)) throw new Error(`Convex functions folder not found: ${root}`);
  if (!existsSync(join(root, "_generated"))) {
    throw new Error(
      `No _generated folder in ${root}; run \`npx convex codegen --system-udfs --typecheck disable\` next to it`,
    );
  }
  const modules: ModuleMap = {};
  for (const file of listFunctionFiles(root)) {
    const url = pathToFileURL(file).href;
    modules[file] = async () => (await import(/* @vite-ignore */ url)) as ModuleExports;
  }
  return modules;
}

export async function schemaFromDirectory(convexDir: string): Promise<AnySchema | undefined> {
  for (const name of ["schema.ts", "schema.js"]) {
    const path = join(resolve(convexDir), name);
    if (existsSync(path)) return ((await import(/* @vite-ignore */ pathToFileURL(path).href)) as { default?: AnySchema }).default;
  }
  return undefined;
}
