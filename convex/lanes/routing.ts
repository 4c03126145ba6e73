/**
 * How a job's type routes it (pure: the extension imports it too, so its "no online worker handles …" line
 * follows the same rule as the server's lanes).
 *
 * A job goes only to a worker that offers its type's capability and all of its required capabilities:
 * - `app.<name>` → `apps` (one handler runs every app);
 * - any other type → the type itself (`demo.primes`, `recipe.wordcount`, `ollama.generate`): a handler
 *   advertises its own type by default, and an Ollama handler advertises its type besides `ollama:<model>`.
 */
import { APP_TYPE_PREFIX, APPS_CAPABILITY } from "../core/appLimits";

/** The capability every app job routes to, and an app job type's prefix (app.<name>): what lanes name their apps by. */
export { APP_TYPE_PREFIX, APPS_CAPABILITY };

/** The capability a worker must offer to run jobs of this type. */
export function typeCapability(type: string): string {
  return type.startsWith(APP_TYPE_PREFIX) ? APPS_CAPABILITY : type;
}

/** A job's routing capabilities: its type's capability plus its required ones, sorted and de-duplicated. */
export function routingCapabilities(type: string, requiredCapabilities: readonly string[]): string[] {
  return [...new Set([typeCapability(type), ...requiredCapabilities])].sort();
}

/**
 * Which of a lane's capabilities no online worker offers (sorted): what to name when its jobs wait for
 * nobody. Empty when each is offered by someone (whether one worker offers them all is `canRunAll`).
 */
export function capabilitiesNobodyOffers(laneCapabilities: readonly string[], workers: readonly (readonly string[])[]): string[] {
  const offered = new Set(workers.flat());
  return laneCapabilities.filter((c) => !offered.has(c));
}

/** Whether one of these workers offers every capability of a lane. */
export function canRunAll(laneCapabilities: readonly string[], workers: readonly (readonly string[])[]): boolean {
  return workers.some((w) => laneCapabilities.every((c) => w.includes(c)));
}
