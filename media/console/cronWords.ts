/**
 * A 5-field cron line in words, for the lines schedules mostly use ("every 10 minutes", "every day at 09:00",
 * "Monday to Friday at 06:30"); any other line is shown as written (undefined here).
 */
const DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
const NUMBER = /^\d{1,2}$/;

export function cronInWords(line: string): string | undefined {
  const [minute, hour, dayOfMonth, month, dayOfWeek, extra] = line.trim().split(/\s+/);
  if (extra !== undefined || dayOfWeek === undefined || month !== "*") return undefined;
  const days = dayOfMonth === "*" ? daysOfWeek(dayOfWeek) : dayOfWeek === "*" && NUMBER.test(dayOfMonth) ? `on day ${Number(dayOfMonth)} of every month` : undefined;
  if (days === undefined) return undefined;
  if (minute === "*" && hour === "*") return days === "every day" ? "every minute" : undefined;
  const step = /^\*\/(\d{1,2})$/.exec(minute);
  if (step && hour === "*") return days === "every day" ? `every ${Number(step[1])} minutes` : undefined;
  if (!NUMBER.test(minute)) return undefined;
  if (hour === "*") return days === "every day" ? `every hour at minute ${Number(minute)}` : undefined;
  if (!NUMBER.test(hour)) return undefined;
  return `${days} at ${hour.padStart(2, "0")}:${minute.padStart(2, "0")}`;
}

function daysOfWeek(field: string): string | undefined {
  if (field === "*") return "every day";
  if (field === "1-5") return "Monday to Friday";
  const names = field.split(",").map((d) => (NUMBER.test(d) ? DAYS[Number(d) % 7] : undefined));
  return names.every((n) => n !== undefined) ? `every ${names.join(", ")}` : undefined;
}
