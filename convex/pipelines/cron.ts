import { Cron } from "croner";
import { fail } from "../core/errors";

/**
 * Standard 5-field cron lines (minute hour day-of-month month day-of-week) read by croner, in a time zone (IANA
 * name, default UTC). Croner is pure JavaScript (Date and Intl only) and starts no timer without a callback.
 */
export function checkCron(line: string, timezone: string): Cron {
  const fields = line.trim().split(/\s+/);
  if (line.length > 200 || fields.length !== 5) {
    fail("invalid_argument", `cron must have 5 fields (minute hour day-of-month month day-of-week), got ${JSON.stringify(line.slice(0, 80))}`);
  }
  checkTimezone(timezone);
  try {
    // croner reads 6 fields as seconds first: a 5-field line runs at second 0; legacy mode ORs day-of-month and day-of-week, as cron does
    return new Cron(fields.join(" "), { timezone, paused: true, legacyMode: true });
  } catch (e) {
    fail("invalid_argument", `cron ${JSON.stringify(line.slice(0, 80))}: ${(e as Error).message}`);
  }
}

export function checkTimezone(timezone: string): void {
  if (timezone.length === 0 || timezone.length > 64) fail("invalid_argument", "timezone must be an IANA time zone name (e.g. Europe/Paris)");
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: timezone });
  } catch {
    fail("invalid_argument", `timezone ${JSON.stringify(timezone)} is not an IANA time zone name (e.g. Europe/Paris, UTC)`);
  }
}

/** The first tick strictly after `after` (ms), or null when the line never fires again. */
export function nextTick(cron: Cron, after: number): number | null {
  return cron.nextRun(new Date(after))?.getTime() ?? null;
}

/** The next `n` ticks after `after`. */
export function nextTicks(cron: Cron, after: number, n: number): number[] {
  return cron.nextRuns(n, new Date(after)).map((d) => d.getTime());
}
