import { describe, expect, it } from "vitest";
import { parseConsoleRequest } from "../../../extension/protocol/consoleProtocol";
import { cronInWords } from "../../../media/console/cronWords";

describe("the Schedules page's messages are validated before anything acts on them", () => {
  it("accepts the page and each schedule button with a schedule id", () => {
    for (const request of [
      { type: "page", page: "schedules" },
      { type: "pauseSchedule", scheduleId: "k57abc123" },
      { type: "resumeSchedule", scheduleId: "k57abc123" },
      { type: "removeSchedule", scheduleId: "0000000000000000010006schedules" },
    ]) {
      expect(parseConsoleRequest(request)).toEqual({ ok: true, request });
    }
  });

  it("refuses a missing, malformed or extra field, saying why", () => {
    const cases: Array<[unknown, RegExp]> = [
      [{ type: "pauseSchedule" }, /"pauseSchedule" needs a schedule id/],
      [{ type: "resumeSchedule", scheduleId: 7 }, /"resumeSchedule" needs a schedule id/],
      [{ type: "removeSchedule", scheduleId: "../etc" }, /"removeSchedule" needs a schedule id/],
      [{ type: "removeSchedule", scheduleId: "a".repeat(65) }, /needs a schedule id/],
      [{ type: "pauseSchedule", scheduleId: "k57", name: "nightly" }, /unexpected field\(s\) name in "pauseSchedule"/],
      [{ type: "page", page: "schedule" }, /needs a page of overview, jobs, workers, access, schedules/],
    ];
    for (const [raw, why] of cases) {
      const parsed = parseConsoleRequest(raw);
      expect(parsed.ok).toBe(false);
      if (!parsed.ok) expect(parsed.reason).toMatch(why);
    }
  });
});

describe("a cron line in words", () => {
  it("says the common lines in words", () => {
    expect(cronInWords("* * * * *")).toBe("every minute");
    expect(cronInWords("*/10 * * * *")).toBe("every 10 minutes");
    expect(cronInWords("5 * * * *")).toBe("every hour at minute 5");
    expect(cronInWords("0 9 * * *")).toBe("every day at 09:00");
    expect(cronInWords("30 6 * * 1-5")).toBe("Monday to Friday at 06:30");
    expect(cronInWords("0 2 * * 0,6")).toBe("every Sunday, Saturday at 02:00");
    expect(cronInWords("0 2 1 * *")).toBe("on day 1 of every month at 02:00");
  });

  it("leaves any other line as written (undefined), never a wrong sentence", () => {
    for (const line of ["0 9 * 1 *", "0 9-17 * * *", "*/5 9 * * *", "0 9 1 * 1", "0 0 * * MON", "*/10 * * * 1-5", "0 9 * * * *", "", "0 9 * *"]) {
      expect(cronInWords(line), line).toBeUndefined();
    }
  });
});
