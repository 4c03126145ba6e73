/**
 * Weekly time windows in which donating is allowed, written the way a person would:
 *   "Mon-Fri 18:00-08:00"   (crosses midnight: Monday 18:00 to Tuesday 08:00, … Friday 18:00 to Saturday 08:00)
 *   "Sat,Sun"               (all day)
 *   "daily 12:00-13:30"
 * Times are local to the machine. An empty list means "any time".
 */
export type TimeWindow = { days: ReadonlySet<number>; startMinute: number; endMinute: number; source: string };

const DAY_NAMES = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];
const FULL_DAY_NAMES = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"];

export function parseTimeWindow(text: string): { ok: true; window: TimeWindow } | { ok: false; error: string } {
  const source = text.trim();
  const match = /^([a-z,\- ]+?)(?:\s+(\d{1,2}):(\d{2})\s*-\s*(\d{1,2}):(\d{2}))?$/i.exec(source);
  if (!match) return { ok: false, error: `"${text}" is not a time window like "Mon-Fri 18:00-08:00"` };
  const days = parseDays(match[1]);
  if (typeof days === "string") return { ok: false, error: `"${text}": ${days}` };
  if (match[2] === undefined) return { ok: true, window: { days, startMinute: 0, endMinute: 24 * 60, source } };
  const start = toMinute(match[2], match[3]);
  const end = toMinute(match[4], match[5]);
  if (start === undefined || end === undefined) return { ok: false, error: `"${text}": times run from 00:00 to 24:00` };
  if (start === end) return { ok: false, error: `"${text}": the window starts and ends at the same time` };
  return { ok: true, window: { days, startMinute: start, endMinute: end, source } };
}

/** Is `date` (local time) inside any of the windows? No windows: always. */
export function insideWindows(windows: readonly TimeWindow[], date: Date): boolean {
  if (windows.length === 0) return true;
  const day = date.getDay();
  const minute = date.getHours() * 60 + date.getMinutes();
  return windows.some((w) => {
    if (w.startMinute < w.endMinute) return w.days.has(day) && minute >= w.startMinute && minute < w.endMinute;
    // Crosses midnight: the evening part belongs to the listed day, the morning part to the day after it.
    const yesterday = (day + 6) % 7;
    return (w.days.has(day) && minute >= w.startMinute) || (w.days.has(yesterday) && minute < w.endMinute);
  });
}

function parseDays(text: string): ReadonlySet<number> | string {
  const spec = text.trim().toLowerCase();
  if (spec === "daily" || spec === "every day") return new Set([0, 1, 2, 3, 4, 5, 6]);
  if (spec === "weekdays") return new Set([1, 2, 3, 4, 5]);
  if (spec === "weekends") return new Set([0, 6]);
  const days = new Set<number>();
  for (const part of spec.split(",").map((p) => p.trim())) {
    const [from, to, extra] = part.split("-").map((p) => p.trim());
    if (extra !== undefined) return `"${part}" is not a day or a range of days`;
    const a = dayIndex(from);
    const b = to === undefined ? a : dayIndex(to);
    if (a === undefined || b === undefined) return `"${part}" is not a day (use Mon, Tue, … Sun)`;
    for (let d = a; ; d = (d + 1) % 7) {
      days.add(d);
      if (d === b) break;
    }
  }
  return days;
}

function dayIndex(name: string): number | undefined {
  const short = DAY_NAMES.indexOf(name);
  if (short >= 0) return short;
  const full = FULL_DAY_NAMES.indexOf(name);
  return full >= 0 ? full : undefined;
}

function toMinute(hours: string, minutes: string): number | undefined {
  const h = Number(hours);
  const m = Number(minutes);
  if (m > 59 || h > 24 || (h === 24 && m !== 0)) return undefined;
  return h * 60 + m;
}
