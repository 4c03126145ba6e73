/**
 * A lane's pace and how long its queue may take, in words that agree with each other at every scale (pure): a pace
 * under one a minute is said per hour ("2 an hour"), never "0.0 a minute"; an estimate in min, h or days.
 */

/** Jobs finished over the last hour → "2 an hour", "1.5 a minute", "12 a minute". */
export function paceText(finishedLastHour: number): string {
  if (finishedLastHour < 60) return `${Math.round(finishedLastHour)} an hour`;
  const perMinute = finishedLastHour / 60;
  return `${perMinute >= 9.95 ? Math.round(perMinute) : Number(perMinute.toFixed(1))} a minute`;
}

/** Minutes → "under a minute", "20 min", "1.5 h", "3 days". */
export function estimateText(minutes: number): string {
  if (minutes < 1) return "under a minute";
  if (minutes < 89.5) return `${Math.round(minutes)} min`;
  const hours = minutes / 60;
  if (hours < 47.5) return `${hours >= 9.95 ? Math.round(hours) : Number(hours.toFixed(1))} h`;
  return `${Math.round(hours / 24)} days`;
}

/** How long `queued` jobs take at the last hour's pace: "about 1.5 h" (null when nothing finished). */
export function queueEstimate(queued: number, finishedLastHour: number): string | null {
  if (finishedLastHour <= 0 || queued <= 0) return null;
  return `about ${estimateText((queued / finishedLastHour) * 60)}`;
}
