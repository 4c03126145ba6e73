import { getFunctionName } from "convex/server";
import { ConvexError } from "convex/values";
import { describe, expect, it } from "vitest";
import { runFarmhand } from "../../../extension/cli/farmhandMain";
import { runSchedule, scheduleTable, timeIn } from "../../../extension/cli/schedule";
import { FarmhandClient, type ScheduleView, type Transport } from "../../../extension/sdk/client";

type Call = { fn: string; args: Record<string, unknown> };

/** A farm holding `schedules`, answering schedules:* by name as the server does (not_found for an unknown name). */
function fakeFarm(schedules: ScheduleView[], refuse?: { fn: string; code: string; message: string }) {
  const calls: Call[] = [];
  const answer = (ref: unknown, args: Record<string, unknown>) => {
    const fn = getFunctionName(ref as never);
    calls.push({ fn, args });
    if (refuse && refuse.fn === fn) return Promise.reject(new ConvexError({ code: refuse.code, message: refuse.message }));
    if (fn === "schedules:list") return Promise.resolve(schedules);
    if (fn === "schedules:create") return Promise.resolve({ scheduleId: "sched1", nextRunAt: Date.UTC(2026, 10, 28, 1, 0) });
    const known = schedules.find((s) => s.name === args.name);
    if (!known) return Promise.reject(new ConvexError({ code: "not_found", message: `No schedule named ${JSON.stringify(args.name)}` }));
    if (fn === "schedules:pause") return Promise.resolve({ paused: true });
    if (fn === "schedules:resume") return Promise.resolve({ paused: false, nextRunAt: Date.UTC(2026, 10, 28, 1, 0) });
    return Promise.resolve({ removed: true });
  };
  const transport = { mutation: answer, query: answer, onUpdate: () => () => undefined, close: () => Promise.resolve() } as unknown as Transport;
  return { calls, connect: () => new FarmhandClient({ client: transport, clientKey: "fh_c_test" }) };
}

function view(fields: Partial<ScheduleView> & { name: string }): ScheduleView {
  return {
    scheduleId: `id_${fields.name}` as ScheduleView["scheduleId"],
    cron: "0 2 * * *",
    timezone: "UTC",
    overlap: "skip",
    type: "demo.echo",
    paused: false,
    pausedReason: null,
    nextRuns: [],
    lastRunAt: null,
    lastJob: null,
    lastSkippedAt: null,
    lastError: null,
    lastErrorCode: null,
    lastErrorAt: null,
    createdAt: 0,
    ...fields,
  };
}

async function run(argv: string[], farm: ReturnType<typeof fakeFarm>, env: NodeJS.ProcessEnv = { FARMHAND_CLIENT_KEY: "fh_c_test", FARMHAND_URL: "http://127.0.0.1:1" }) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runSchedule(argv, { env, out: (l) => out.push(l), err: (l) => err.push(l) }, farm.connect);
  return { code, out, err: err.join("\n") };
}

describe("farmhand schedule", () => {
  it("times read as the schedule's own clock", () => {
    const at = Date.UTC(2026, 10, 28, 1, 0);
    expect(timeIn(at, "UTC")).toBe("2026-11-28 01:00");
    expect(timeIn(at, "Europe/Paris")).toBe("2026-11-28 02:00");
    expect(timeIn(Date.UTC(2026, 6, 1, 0, 30), "America/New_York")).toBe("2026-06-30 20:30");
  });

  it("the table: one row a schedule, columns aligned, paused with no next run, the last run's job and status", () => {
    const lines = scheduleTable([
      view({ name: "nightly", timezone: "Europe/Paris", nextRuns: [Date.UTC(2026, 10, 28, 1, 0)], lastRunAt: Date.UTC(2026, 10, 27, 1, 0), lastJob: { jobId: "job7" as never, status: "succeeded" } }),
      view({ name: "hourly-report", cron: "0 * * * *", paused: true, lastRunAt: Date.UTC(2026, 10, 27, 8, 0) }),
      view({ name: "new", type: "app.render" }),
    ]);
    expect(lines).toEqual([
      "NAME           TYPE        CRON       TIMEZONE      STATE   NEXT RUN          LAST RUN                         LAST ERROR",
      "nightly        demo.echo   0 2 * * *  Europe/Paris  active  2026-11-28 02:00  2026-11-27 02:00 job7 succeeded  -",
      "hourly-report  demo.echo   0 * * * *  UTC           paused  -                 2026-11-27 08:00 (no job)        -",
      "new            app.render  0 2 * * *  UTC           active  -                 -                                -",
    ]);
    // why the farm paused it, and the last tick that could not submit
    const [, troubled] = scheduleTable([
      view({
        name: "t",
        paused: true,
        pausedReason: "its client key “ci” (fh_c_abcd…) was revoked",
        lastRunAt: Date.UTC(2026, 10, 27, 8, 0),
        lastError: `app "render" has no version: ${"x".repeat(200)}`,
        lastErrorCode: "not_found",
        lastErrorAt: Date.UTC(2026, 10, 27, 8, 0),
      }),
    ]);
    expect(troubled).toContain("paused: its client key “ci” (fh_c_abcd…) was revoked");
    expect(troubled).toMatch(/2026-11-27 08:00 \(no job\)  2026-11-27 08:00 not_found: app "render" has no version: x+…$/);
    expect(troubled.split("  ").at(-1)!.length).toBe(100);
  });

  it("create sends the spec with the key and prints the id, its next run on stderr; --job sends a whole job spec; --json prints the answer", async () => {
    const farm = fakeFarm([]);
    const created = await run(["create", "--name", "n", "--cron", "0 2 * * *", "--timezone", "Europe/Paris", "--overlap", "allow", "--type", "demo.echo", "--payload", '{"a":1}'], farm);
    expect(created).toEqual({ code: 0, out: ["sched1"], err: "next run 2026-11-28 02:00 Europe/Paris" });
    expect(farm.calls).toEqual([
      { fn: "schedules:create", args: { clientKey: "fh_c_test", name: "n", cron: "0 2 * * *", timezone: "Europe/Paris", overlap: "allow", job: { type: "demo.echo", payload: { a: 1 } } } },
    ]);
    const whole = fakeFarm([]);
    const spec = { type: "render", payload: { frame: 1 }, priority: 5, maxAttempts: 3 };
    expect((await run(["create", "--name", "w", "--cron", "0 2 * * *", "--job", JSON.stringify(spec)], whole)).code).toBe(0);
    expect(whole.calls).toEqual([{ fn: "schedules:create", args: { clientKey: "fh_c_test", name: "w", cron: "0 2 * * *", job: spec } }]);
    const json = await run(["create", "--name", "n", "--cron", "0 2 * * *", "--type", "t", "--json"], fakeFarm([]));
    expect(json.out.map((l) => JSON.parse(l) as unknown)).toEqual([{ scheduleId: "sched1", nextRunAt: Date.UTC(2026, 10, 28, 1, 0) }]);
  });

  it("pause, resume and remove take a name, or an id looked up through list", async () => {
    const farm = fakeFarm([view({ name: "nightly", timezone: "Europe/Paris" })]);
    expect(await run(["pause", "nightly"], farm)).toEqual({ code: 0, out: ["paused nightly"], err: "" });
    expect(farm.calls.map((c) => c.fn)).toEqual(["schedules:pause"]);
    farm.calls.length = 0;
    expect(await run(["remove", "id_nightly"], farm)).toEqual({ code: 0, out: ["removed nightly"], err: "" });
    expect(farm.calls.map((c) => [c.fn, c.args.name])).toEqual([["schedules:remove", "id_nightly"], ["schedules:list", undefined], ["schedules:remove", "nightly"]]);
    expect((await run(["resume", "nightly"], farm)).out).toEqual(["resumed nightly; next run 2026-11-28 02:00 Europe/Paris"]);
    expect((await run(["pause", "nightly", "--json"], farm)).out).toEqual(['{"name":"nightly","paused":true}']);
  });

  it("an unknown schedule exits 1 with a clear message; the server's invalid_argument exits 2 in its own words, other refusals 1", async () => {
    const unknown = await run(["pause", "nope"], fakeFarm([view({ name: "nightly" })]));
    expect(unknown).toEqual({ code: 1, out: [], err: 'farmhand schedule pause: no schedule named "nope" (nor with that id); farmhand schedule list shows them' });
    const badCron = await run(["create", "--name", "n", "--cron", "61 * * * *", "--type", "t"], fakeFarm([], { fn: "schedules:create", code: "invalid_argument", message: "cron: minute 61" }));
    expect(badCron).toEqual({ code: 2, out: [], err: "farmhand schedule create: cron: minute 61" });
    const refused = await run(["list"], fakeFarm([], { fn: "schedules:list", code: "bad_key", message: "Unknown client key" }));
    expect(refused).toEqual({ code: 1, out: [], err: "farmhand schedule list: Unknown client key" });
    // an id that is nobody's name but a refusal other than not_found is not looked up
    const farm = fakeFarm([], { fn: "schedules:remove", code: "bad_key", message: "Unknown client key" });
    expect((await run(["remove", "x"], farm)).code).toBe(1);
    expect(farm.calls.map((c) => c.fn)).toEqual(["schedules:remove"]);
  });

  it("usage: missing flags, --job beside --type or not a spec, a bad --overlap or --payload, no key, unknown subcommands exit 2 before any call", async () => {
    const farm = fakeFarm([]);
    for (const argv of [
      ["create", "--name", "n", "--type", "t"],
      ["create", "--name", "n", "--cron", "* * * * *"],
      ["create", "--name", "n", "--cron", "* * * * *", "--type", "t", "--job", '{"type":"t"}'],
      ["create", "--name", "n", "--cron", "* * * * *", "--job", '["t"]'],
      ["create", "--name", "n", "--cron", "* * * * *", "--job", '{"payload":1}'],
      ["create", "--name", "n", "--cron", "* * * * *", "--type", "t", "--overlap", "never"],
      ["create", "--name", "n", "--cron", "* * * * *", "--type", "t", "--payload", "{nope"],
      ["pause"],
      ["pause", "a", "b"],
      ["list", "extra"],
      ["frobnicate"],
      ["list", "--bogus"],
    ]) {
      const usage = await run(argv, farm);
      expect(usage.code, argv.join(" ")).toBe(2);
      expect(usage.err).toMatch(/\nRun farmhand schedule --help for usage\.$/);
    }
    const noKey = await run(["list"], farm, { XDG_CONFIG_HOME: "/nonexistent-farmhand-home", FARMHAND_URL: "http://127.0.0.1:1" });
    expect(noKey.code).toBe(2);
    expect(noKey.err).toMatch(/^farmhand schedule list: no client key: set FARMHAND_CLIENT_KEY or keep one in /);
    expect(farm.calls).toEqual([]);
    expect((await run(["--help"], farm)).code).toBe(0);
    expect((await run([], farm)).code).toBe(2);
  });
});

describe("farmhand lists schedule and hands it its arguments", () => {
  it("--help names it; farmhand schedule … runs it", async () => {
    const out: string[] = [];
    const err: string[] = [];
    const io = { env: { XDG_CONFIG_HOME: "/nonexistent-farmhand-home", FARMHAND_URL: "http://127.0.0.1:1" }, out: (l: string) => out.push(l), err: (l: string) => err.push(l), onSignal: () => () => undefined };
    expect(await runFarmhand(["--help"], io)).toBe(0);
    expect(out.join("\n")).toMatch(/^ {2}schedule {3}create, list, pause, resume or remove a schedule/m);
    expect(await runFarmhand(["schedule", "list"], io)).toBe(2);
    expect(err.join("\n")).toMatch(/^farmhand schedule list: no client key/);
  });
});

describe("farmhand/client schedules", () => {
  it("each call goes to its server function with the client key", async () => {
    const farm = fakeFarm([view({ name: "nightly" })]);
    const client = farm.connect();
    await client.schedules.create({ name: "n", cron: "* * * * *", job: { type: "t" } });
    expect(await client.schedules.list()).toHaveLength(1);
    expect(await client.schedules.pause("nightly")).toEqual({ paused: true });
    await client.schedules.resume("nightly");
    expect(await client.schedules.remove("nightly")).toEqual({ removed: true });
    expect(farm.calls).toEqual([
      { fn: "schedules:create", args: { clientKey: "fh_c_test", name: "n", cron: "* * * * *", job: { type: "t" } } },
      { fn: "schedules:list", args: { clientKey: "fh_c_test" } },
      { fn: "schedules:pause", args: { clientKey: "fh_c_test", name: "nightly" } },
      { fn: "schedules:resume", args: { clientKey: "fh_c_test", name: "nightly" } },
      { fn: "schedules:remove", args: { clientKey: "fh_c_test", name: "nightly" } },
    ]);
    const refused = await client.schedules.pause("nope").catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ConvexError);
    expect((refused as ConvexError<{ code: string }>).data.code).toBe("not_found");
  });
});
