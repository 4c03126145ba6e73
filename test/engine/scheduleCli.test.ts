import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { internal } from "../../convex/_generated/api";
import { FarmhandClient } from "../../extension/sdk/client";
import { errorCode } from "../../extension/worker/errors";
import { seed, startTestServer, type Seeded, type TestServer } from "../server";
import { runFarmhand } from "./cliProcess";

type ListedSchedule = { scheduleId: string; name: string; cron: string; timezone: string; overlap: string; type: string; paused: boolean; nextRuns: number[] };

describe("farmhand schedule and the SDK's schedules, on the loopback server", () => {
  let server: TestServer;
  let seeded: Seeded;
  const home = mkdtempSync(join(tmpdir(), "farmhand-schedules-"));
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    server = await startTestServer();
    seeded = await seed(server, 0);
    env = { FARMHAND_URL: server.url, FARMHAND_CLIENT_KEY: seeded.clientKey, XDG_CONFIG_HOME: home };
  });
  afterAll(async () => {
    await server?.close();
  });

  const listJson = async () => {
    const run = await runFarmhand(["schedule", "list", "--json"], env);
    expect(run.code, run.err).toBe(0);
    return run.out.map((line) => JSON.parse(line) as ListedSchedule);
  };

  it("create, list (table and JSON lines), pause, resume and remove, by name or by id", async () => {
    const created = await runFarmhand(
      ["schedule", "create", "--name", "nightly", "--cron", "0 2 * * *", "--timezone", "Europe/Paris", "--overlap", "allow", "--type", "demo.echo", "--payload", '{"n":1}'],
      env,
    );
    expect(created.code, created.err).toBe(0);
    expect(created.out).toHaveLength(1);
    const scheduleId = created.out[0];
    // 02:00 in Paris, as its clock reads
    expect(created.err).toMatch(/^next run \d{4}-\d\d-\d\d 02:00 Europe\/Paris\n$/);

    const [listed] = await listJson();
    expect(listed).toMatchObject({ scheduleId, name: "nightly", cron: "0 2 * * *", timezone: "Europe/Paris", overlap: "allow", type: "demo.echo", paused: false });
    expect(listed.nextRuns).toHaveLength(3);

    const table = await runFarmhand(["schedule", "list"], env);
    expect(table.code).toBe(0);
    expect(table.out[0]).toMatch(/^NAME\s+TYPE\s+CRON\s+TIMEZONE\s+STATE\s+NEXT RUN\s+LAST RUN\s+LAST ERROR$/);
    expect(table.out[1]).toMatch(/^nightly\s+demo\.echo\s+0 2 \* \* \*\s+Europe\/Paris\s+active\s+\d{4}-\d\d-\d\d 02:00\s+-\s+-$/);

    const paused = await runFarmhand(["schedule", "pause", "nightly"], env);
    expect(paused).toMatchObject({ code: 0, out: ["paused nightly"] });
    expect((await listJson())[0]).toMatchObject({ paused: true, nextRuns: [] });
    expect((await runFarmhand(["schedule", "list"], env)).out[1]).toMatch(/\spaused\s+-\s+-\s+-$/);

    // by id, as create printed it
    const resumed = await runFarmhand(["schedule", "resume", scheduleId], env);
    expect(resumed.code, resumed.err).toBe(0);
    expect(resumed.out[0]).toMatch(/^resumed nightly; next run \d{4}-\d\d-\d\d 02:00 Europe\/Paris$/);
    expect((await listJson())[0]).toMatchObject({ paused: false });

    const removed = await runFarmhand(["schedule", "remove", "nightly", "--json"], env);
    expect(removed.code).toBe(0);
    expect(JSON.parse(removed.out[0])).toEqual({ name: "nightly", removed: true });
    expect(await listJson()).toEqual([]);
    expect((await runFarmhand(["schedule", "list"], env)).out).toEqual(["No schedules."]);
  });

  it("bad input: the server's own words for a bad cron line or time zone (exit 2), an unknown schedule (exit 1), no key (submit's message, exit 2)", async () => {
    const create = (extra: string[]) => runFarmhand(["schedule", "create", "--name", "bad", "--type", "demo.echo", ...extra], env);
    const badCron = await create(["--cron", "61 * * * *"]);
    expect(badCron.code).toBe(2);
    expect(badCron.err).toMatch(/^farmhand schedule create: cron "61 \* \* \* \*": /);
    expect(badCron.err).not.toMatch(/ConvexError|Request ID|Called by client/);
    const fourFields = await create(["--cron", "0 2 * *"]);
    expect(fourFields.code).toBe(2);
    expect(fourFields.err).toContain("cron must have 5 fields");
    const badZone = await create(["--cron", "0 2 * * *", "--timezone", "Mars/Olympus"]);
    expect(badZone.code).toBe(2);
    expect(badZone.err).toContain('timezone "Mars/Olympus" is not an IANA time zone name');
    const unknownField = await runFarmhand(["schedule", "create", "--name", "bad", "--cron", "0 2 * * *", "--job", '{"type":"demo.echo","prio":5}'], env);
    expect(unknownField.code).toBe(2);
    expect(unknownField.err).toMatch(/^farmhand schedule create: --job has "prio", which a job spec has not \(it takes type, payload, priority, /);
    const wholeSpec = await runFarmhand(["schedule", "create", "--name", "whole", "--cron", "0 2 * * *", "--job", '{"type":"demo.echo","payload":{"n":2},"priority":5,"maxAttempts":2}'], env);
    expect(wholeSpec.code, wholeSpec.err).toBe(0);
    expect((await listJson())[0]).toMatchObject({ name: "whole", type: "demo.echo" });
    expect((await runFarmhand(["schedule", "remove", "whole"], env)).code).toBe(0);
    expect(await listJson()).toEqual([]);

    for (const action of ["pause", "resume", "remove"]) {
      const unknown = await runFarmhand(["schedule", action, "nope"], env);
      expect(unknown.code, action).toBe(1);
      expect(unknown.err).toBe(`farmhand schedule ${action}: no schedule named "nope" (nor with that id); farmhand schedule list shows them\n`);
    }

    const noKey = await runFarmhand(["schedule", "list"], { ...env, FARMHAND_CLIENT_KEY: "" });
    const submitNoKey = await runFarmhand(["status", "x"], { ...env, FARMHAND_CLIENT_KEY: "" });
    expect(noKey.code).toBe(2);
    expect(noKey.err.split("\n")[0].replace("farmhand schedule list: ", "")).toBe(submitNoKey.err.split("\n")[0].replace("farmhand status: ", ""));
    expect(noKey.err).toContain("no client key: set FARMHAND_CLIENT_KEY");
    const badKey = await runFarmhand(["schedule", "list"], { ...env, FARMHAND_CLIENT_KEY: "fh_c_nope" });
    expect(badKey.code).toBe(1);
    // an operator key manages the org's schedules too (schedules:* take either)
    const { key: operatorKey } = await server.write(async (t) => await t.mutation(internal.admin.createOperatorKey, { orgId: seeded.orgId, name: "op" }));
    const asOperator = await runFarmhand(["schedule", "create", "--name", "op", "--cron", "0 0 1 1 *", "--type", "demo.echo"], { ...env, FARMHAND_CLIENT_KEY: operatorKey });
    expect(asOperator.code, asOperator.err).toBe(0);
    expect((await listJson()).map((s) => s.name)).toEqual(["op"]);
    expect((await runFarmhand(["schedule", "remove", "op"], env)).code).toBe(0);

    for (const usage of [["schedule"], ["schedule", "frobnicate"], ["schedule", "create", "--name", "x"], ["schedule", "pause"], ["schedule", "create", "--name", "x", "--cron", "* * * * *", "--type", "t", "--overlap", "never"]]) {
      expect((await runFarmhand(usage, env)).code, usage.join(" ")).toBe(2);
    }
  });

  it("the SDK: client.schedules create, list, pause, resume, remove; errors carry the server's code", async () => {
    const client = new FarmhandClient({ url: server.url, clientKey: seeded.clientKey, log: false });
    try {
      const created = await client.schedules.create({ name: "hourly", cron: "0 * * * *", job: { type: "demo.echo", payload: null } });
      expect(created.nextRunAt! % 3_600_000).toBe(0);
      expect(await client.schedules.list()).toMatchObject([{ scheduleId: created.scheduleId, name: "hourly", timezone: "UTC", overlap: "skip", paused: false }]);
      expect(await client.schedules.pause("hourly")).toEqual({ paused: true });
      const resumed = await client.schedules.resume("hourly");
      expect(resumed).toMatchObject({ paused: false });
      expect(resumed.nextRunAt! % 3_600_000).toBe(0);
      expect(await client.schedules.remove("hourly")).toEqual({ removed: true });
      expect(errorCode(await client.schedules.pause("hourly").catch((e: unknown) => e))).toBe("not_found");
      expect(errorCode(await client.schedules.create({ name: "x", cron: "* * *", job: { type: "demo.echo" } }).catch((e: unknown) => e))).toBe("invalid_argument");
    } finally {
      await client.close();
    }
  });
});
