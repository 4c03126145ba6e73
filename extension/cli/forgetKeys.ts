/** FARMHAND_KEY and any FARMHAND_<…>_KEY: secrets the CLI reads from its environment. */
const KEY_NAME = /^FARMHAND_(?:[A-Z0-9_]*_)?KEY$/i;

/**
 * Remove the keys from `env` once they are read, so nothing this process starts later (or prints, or dumps)
 * can inherit or show them. Job processes get an allow-listed environment anyway (handlers/jobEnv.ts).
 */
export function forgetKeys(env: NodeJS.ProcessEnv): void {
  for (const name of Object.keys(env)) if (KEY_NAME.test(name)) delete env[name];
}
