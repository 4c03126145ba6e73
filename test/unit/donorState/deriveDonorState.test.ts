import { describe, expect, it } from "vitest";
import type { PresetSource } from "../../../extension/donorState/donorState";
import { CONNECT_GRACE_MS, deriveDonorState, type DonorFacts, type EngineFacts, type OverviewFacts } from "../../../extension/donorState/deriveDonorState";
import { appsButtonLabel, appsText, creditText, describeStatus, farmNotice, joinedMessage, kWh, laneWaitNote, policyText, shortStatus, statusSentence, statusWords, TOGGLE_LABEL, workerText } from "../../../extension/donorState/donorStateText";

const NOW = Date.UTC(2026, 10, 23, 14, 0, 0);
/** NOW's UTC day (a Monday). */
const TODAY = Math.floor(NOW / 86_400_000);
const job = (jobId: string) => ({ jobId, type: "demo.primes", attempt: 1, startedAt: NOW - 1_000 });

const overview = (over: Partial<OverviewFacts> = {}): OverviewFacts => ({
  counts: { pending: 3, running: 1, succeeded: 10, canceled: 0, dead: 1 },
  lanes: [{ routingKey: "gpu", capabilities: ["gpu"], pending: 3, running: 0 }],
  workers: [
    { workerId: "w1", name: "me", isMe: true, revoked: false, lastSeenAt: NOW - 500, maxConcurrentJobs: 2, capabilities: ["demo.primes"] },
    { workerId: "w2", name: "other", isMe: false, revoked: false, lastSeenAt: NOW - 7 * 60_000, maxConcurrentJobs: 4 },
  ],
  throughput: [],
  deadLetters: 1,
  deadLetterList: [{ jobId: "d1", type: "demo.echo", error: "bad input", attempt: 1, maxAttempts: 3 }],
  canManage: false,
  onlineWindowMs: 6 * 60_000,
  ...over,
});

const engine = (over: Partial<EngineFacts> = {}): EngineFacts => ({ phase: "running", connection: { kind: "online" }, pausedByPolicy: false, jobs: [], ...over });

const facts = (over: Partial<DonorFacts> = {}): DonorFacts => ({
  now: NOW,
  joined: true,
  farmUrl: "https://farm.example",
  wanted: true,
  decision: { donate: true },
  remoteWindow: false,
  policy: { preset: "medium", concurrency: 1, idleMinutes: 5, otherCpuPercent: 50, donateOnBattery: false, problems: [] },
  contribution: { succeeded: 0, failed: 0, canceled: 0, busyMs: 0 },
  runsApps: false,
  farm: { watched: true, overview: overview(), answeredAt: NOW },
  engine: engine(),
  ...over,
});

describe("the donor state: one derivation for every surface", () => {
  it("walks off → starting → on → working → draining → off, with what the main button does at each step", () => {
    const steps: Array<[string, Partial<DonorFacts>, string, string]> = [
      ["off", { wanted: false, decision: { donate: false, off: true }, engine: undefined }, "off", "start"],
      ["starting", { engine: engine({ connection: { kind: "never", since: NOW - 1_000 } }) }, "starting", "stop"],
      ["on", {}, "on", "stop"],
      ["working", { engine: engine({ jobs: [job("a"), job("b")] }) }, "2 jobs", "stop"],
      ["draining", { engine: engine({ phase: "draining", jobs: [job("a")] }) }, "finishing 1 job", "stopNow"],
      ["off again", { wanted: false, decision: { donate: false, off: true }, engine: undefined }, "off", "start"],
    ];
    for (const [name, over, short, toggle] of steps) {
      const state = deriveDonorState(facts(over));
      expect([name, shortStatus(state.status), state.toggle]).toEqual([name, short, toggle]);
    }
  });

  it("says draining as 'finishing N jobs, then off', without Snooze or another Finish", () => {
    const state = deriveDonorState(facts({ engine: engine({ phase: "draining", jobs: [job("a")] }) }));
    expect(describeStatus(state.status, NOW)).toBe("finishing 1 job, then off");
    expect(state.actions).toEqual({ snooze: false, finish: false });
  });

  it("offers Finish only while jobs run, and Snooze only while donating is wanted and not already snoozed", () => {
    expect(deriveDonorState(facts()).actions).toEqual({ snooze: true, finish: false });
    expect(deriveDonorState(facts({ engine: engine({ jobs: [job("a")] }) })).actions).toEqual({ snooze: true, finish: true });
    const snoozed = deriveDonorState(facts({ decision: { donate: false, reason: "snoozed until 15:00", cause: "snoozed", until: NOW + 3_600_000 } }));
    expect(snoozed.status).toMatchObject({ kind: "paused", cause: "snoozed", until: NOW + 3_600_000 });
    expect(snoozed.actions.snooze).toBe(false);
  });

  it("a refused key is 'revoked' on every surface: no Stop or Snooze, a rejoin, no stale figures", () => {
    const refusal = { kind: "refused" as const, code: "revoked", message: "This worker key was revoked" };
    for (const over of [{ stopped: { reason: "key refused", refusal }, engine: undefined }, { farm: { watched: true, overview: overview(), error: refusal } }]) {
      const state = deriveDonorState(facts(over));
      expect(state.status).toEqual({ kind: "revoked", problem: refusal });
      expect(state.toggle).toBe("rejoin");
      expect(state.actions).toEqual({ snooze: false, finish: false });
      expect(describeStatus(state.status, NOW)).toMatch(/refused this machine's key \(revoked\)/);
    }
    const fromFarm = deriveDonorState(facts({ farm: { watched: true, overview: overview(), error: refusal } }));
    expect(fromFarm.farm).toEqual({ freshness: { kind: "missing", why: refusal } });
    expect(farmNotice(fromFarm.farm.freshness, NOW)).toMatch(/^The farm refused this machine's key \(revoked\): This worker key was revoked\. Join again/);
  });

  it("a refused key says so while donating is off too: the revoked headline and Join Again…, not 'off' and Start", () => {
    const refusal = { kind: "refused" as const, code: "revoked", message: "This worker key was revoked" };
    const off = { wanted: false, decision: { donate: false, off: true } as const, engine: undefined };
    // the engine stopped on the refusal and the donor switched off since; or the farm's figures were refused while off
    for (const over of [{ ...off, stopped: { reason: "key refused", refusal } }, { ...off, farm: { watched: true, overview: overview(), error: refusal } }]) {
      const state = deriveDonorState(facts(over));
      expect(state.wanted).toBe(false);
      expect(state.status).toEqual({ kind: "revoked", problem: refusal });
      expect(shortStatus(state.status)).not.toBe("off");
      expect(describeStatus(state.status, NOW)).toMatch(/refused this machine's key \(revoked\)/);
      expect(TOGGLE_LABEL[state.toggle]).toBe("Join Again…");
      expect(state.actions).toEqual({ snooze: false, finish: false });
    }
  });

  it("a lost connection is offline with its reason and since when; the figures are marked last known with their age", () => {
    const since = NOW - 125_000;
    const state = deriveDonorState(facts({ engine: engine({ connection: { kind: "down", since }, jobs: [job("a")] }), farm: { watched: true, overview: overview(), answeredAt: since - 5_000, downSince: since } }));
    expect(state.status).toMatchObject({ kind: "offline", jobs: 1, since, problem: { kind: "unreachable" } });
    expect(describeStatus(state.status, NOW)).toMatch(/^offline: the connection to the farm was lost \(since \d{1,2}:\d{2}, 2.1 min ago\)$/);
    expect(state.farm.freshness).toMatchObject({ kind: "lastKnown", asOf: since });
    expect(state.farm.figures?.counts.pending).toBe(3);
    expect(farmNotice(state.farm.freshness, NOW)).toMatch(/^Last known as of \d{1,2}:\d{2} \(2.1 min ago\): cannot reach the farm/);
    expect(state.toggle).toBe("stop");
  });

  it("an engine that never connects is starting for a grace period, then offline", () => {
    const never = (ago: number) => deriveDonorState(facts({ engine: engine({ connection: { kind: "never", since: NOW - ago } }) })).status;
    expect(never(CONNECT_GRACE_MS - 1).kind).toBe("starting");
    expect(never(CONNECT_GRACE_MS)).toMatchObject({ kind: "offline", problem: { message: "could not connect to the farm" } });
  });

  it("says 'Cannot reach the farm' only for an unreachable farm; other errors read as what they are", () => {
    const unreachable = deriveDonorState(facts({ farm: { watched: true, error: { kind: "unreachable", code: "ECONNREFUSED", message: "the farm could not be reached (ECONNREFUSED)" } } }));
    expect(farmNotice(unreachable.farm.freshness, NOW)).toBe("Cannot reach the farm: the farm could not be reached (ECONNREFUSED)");
    const failed = deriveDonorState(facts({ farm: { watched: true, overview: overview(), error: { kind: "failed", message: "boom" } } }));
    expect(farmNotice(failed.farm.freshness, NOW)).toBe("The farm answered with an error: boom");
    expect(deriveDonorState(facts()).farm.freshness).toEqual({ kind: "live" });
    expect(deriveDonorState(facts({ farm: { watched: true } })).farm.freshness).toEqual({ kind: "loading" });
  });

  it("the policy pause keeps its reason and cause, and names the setting that lifts it on the tab where it lives", () => {
    const decision = { donate: false as const, reason: "remote window (farmhand.allowRemoteDonation is off)", cause: "remoteWindow" as const };
    const remote = deriveDonorState(facts({ decision, remoteWindow: true }));
    expect(remote.status).toMatchObject({ kind: "paused", cause: "remoteWindow" });
    expect(remote.actions.fix).toMatchObject({ setting: "farmhand.allowRemoteDonation", how: "ask", tab: "remote" });
    const battery = deriveDonorState(facts({ decision: { donate: false, reason: "on battery power", cause: "onBattery" } }));
    expect(battery.actions.fix).toMatchObject({ setting: "farmhand.donateOnBattery", how: "open", tab: "user" });
    expect(deriveDonorState(facts({ decision: { donate: false, reason: "another VS Code window on this machine is donating", cause: "otherWindow" } })).actions.fix).toBeUndefined();
  });

  it.each([
    ["lowBattery", "battery at 42 %: donates from 90 %, so it charges first", "farmhand.minBatteryPercent", "Battery Charge Setting"],
    ["exclusiveApp", "steam is running", "farmhand.pauseWhileRunning", "Programs That Pause Donating"],
    ["metered", "metered connection: today's 10 MB for jobs is used", "farmhand.meteredLimitMB", "Metered Allowance Setting"],
  ] as const)("a %s pause is said with its reason on every surface's text, with the setting that lifts it", (cause, reason, setting, label) => {
    const state = deriveDonorState(facts({ decision: { donate: false, reason, cause }, remoteWindow: true }));
    expect(state.status).toMatchObject({ kind: "paused", cause, reason });
    expect(state.actions.fix).toEqual({ setting, label, how: "open", tab: "remote" });
    expect(statusWords(state)).toBe("paused");
    expect(statusSentence(state)).toBe(`paused: ${reason}`);
    expect(deriveDonorState(facts({ decision: { donate: false, reason, cause } })).actions.fix?.tab).toBe("user");
  });

  it("a named program that froze the jobs names itself: 'suspended — steam is running', not 'you are using this machine'", () => {
    const frozenJob = { ...job("a"), suspendedSince: NOW - 30_000 };
    const decision = { donate: false as const, reason: "steam is running", cause: "exclusiveApp" as const };
    const held = deriveDonorState(facts({ decision, engine: engine({ phase: "paused", pausedByPolicy: true, suspendedSince: NOW - 30_000, jobs: [frozenJob] }) }));
    expect(held.status).toMatchObject({ kind: "suspended", cause: "exclusiveApp", reason: "steam is running" });
    expect(shortStatus(held.status)).toBe("suspended — steam is running");
    expect(describeStatus(held.status, NOW)).toMatch(/^suspended: steam is running \(1 job held since/);
    expect(held.actions.fix?.setting).toBe("farmhand.pauseWhileRunning");
  });

  it("a program that holds the GPU jobs only: donating goes on, every surface says GPU jobs are paused and why, with its setting", () => {
    const state = deriveDonorState(facts({ gpuProgram: "obs", engine: engine({ jobs: [job("a")] }) }));
    expect(state.status).toEqual({ kind: "working", jobs: 1 });
    expect(state.gpuPause).toEqual({ reason: "obs is running", fix: { setting: "farmhand.pauseGpuWhileRunning", label: "Programs That Pause GPU Jobs", how: "open", tab: "user" } });
    expect(state.actions.fix?.setting).toBe("farmhand.pauseGpuWhileRunning");
    expect(statusWords(state)).toBe("1 job · GPU paused");
    expect(statusSentence(state)).toBe("working (1 job) · GPU jobs paused: obs is running");
    // a whole pause's own setting comes first; switched off, nothing is said
    const paused = deriveDonorState(facts({ gpuProgram: "obs", decision: { donate: false, reason: "on battery power", cause: "onBattery" } }));
    expect(paused.actions.fix?.setting).toBe("farmhand.donateOnBattery");
    expect(paused.gpuPause?.reason).toBe("obs is running");
    const off = deriveDonorState(facts({ gpuProgram: "obs", wanted: false, decision: { donate: false, off: true }, engine: undefined }));
    expect(off.gpuPause).toBeUndefined();
    expect(statusWords(off)).toBe("off");
  });

  it("the engine's own pause is resumed with a click; a suspended engine holds its jobs", () => {
    const auto = deriveDonorState(facts({ engine: engine({ phase: "paused", reason: "5 failures in a row", jobs: [job("a")] }) }));
    expect(auto.status).toEqual({ kind: "autoPaused", jobs: 1, reason: "5 failures in a row" });
    expect(auto.toggle).toBe("resume");
    const byPolicy = deriveDonorState(facts({ engine: engine({ phase: "paused", pausedByPolicy: true }) }));
    expect(byPolicy.status.kind).toBe("waiting"); // the decision says donate: the session resumes it
    const held = deriveDonorState(facts({ engine: engine({ suspendedSince: NOW - 60_000, jobs: [job("a")] }) }));
    expect(held.status).toEqual({ kind: "suspended", jobs: 1, since: NOW - 60_000 });
    expect(describeStatus(held.status, NOW)).toMatch(/^suspended: you are using this machine \(1 job held since/);
  });

  it("the policy's pause for the owner's return that froze the jobs is suspended (held), not paused (finishing)", () => {
    const frozenJob = { ...job("a"), suspendedSince: NOW - 120_000 };
    const back = { donate: false as const, reason: "you are using the computer (starts after 5 idle min)", cause: "userActive" as const, until: NOW + 60_000 };
    const held = deriveDonorState(facts({ decision: back, engine: engine({ phase: "paused", pausedByPolicy: true, suspendedSince: NOW - 120_000, jobs: [frozenJob] }) }));
    expect(held.status).toMatchObject({ kind: "suspended", jobs: 1, since: NOW - 120_000, reason: back.reason, cause: "userActive" });
    expect(shortStatus(held.status)).toBe("suspended — you are using this machine");
    expect(held.actions).toMatchObject({ snooze: true, finish: true, fix: { setting: "farmhand.idleMinutes" } });
    expect(held.jobs[0].suspendedSince).toBe(NOW - 120_000);
    // the full preset lets the jobs run on: the same pause with nothing frozen is paused
    const ranOn = deriveDonorState(facts({ decision: back, engine: engine({ phase: "paused", pausedByPolicy: true, jobs: [job("a")] }) }));
    expect(ranOn.status.kind).toBe("paused");
    expect(shortStatus(ranOn.status)).toBe("paused");
  });

  it("this machine's row says what it really runs at once: the lesser of the policy and the farm's grant", () => {
    const state = deriveDonorState(facts());
    expect(state.policy).toMatchObject({ concurrency: 1, farmAllows: 2, runsUpTo: 1 });
    expect(state.farm.figures?.workers.find((w) => w.isMe)?.maxJobs).toBe(1);
    expect(state.farm.figures?.workers.find((w) => !w.isMe)?.maxJobs).toBe(4);
    const wide = deriveDonorState(facts({ policy: { ...facts().policy, concurrency: 8 } }));
    expect(wide.policy.runsUpTo).toBe(2);
  });

  it("counts the jobs this machine runs as running even before the farm's summary (up to 5 s old) has seen them", () => {
    // the summary says 3 pending, 1 running; this machine runs 2 of them: the second was still pending there
    const state = deriveDonorState(facts({ engine: engine({ jobs: [job("a"), job("b")] }) }));
    expect(state.farm.figures?.counts).toMatchObject({ pending: 2, running: 2 });
    // a summary that already counts them is left alone
    const seen = deriveDonorState(facts({ engine: engine({ jobs: [job("a")] }) }));
    expect(seen.farm.figures?.counts).toMatchObject({ pending: 3, running: 1 });
    const idle = deriveDonorState(facts({ engine: engine({ jobs: [job("a"), job("b"), job("c"), job("d"), job("e")] }), farm: { watched: true, overview: overview({ counts: { pending: 1, running: 0, succeeded: 0, canceled: 0, dead: 0 } }), answeredAt: NOW } }));
    expect(idle.farm.figures?.counts).toMatchObject({ pending: 0, running: 5 });
  });

  it("marks a lane no online worker can run, a dead letter that gave up early, and last-seen times as the farm gave them", () => {
    const f = deriveDonorState(facts()).farm.figures!;
    expect(f.lanes[0]).toMatchObject({ routingKey: "gpu", servable: false });
    expect(f.dead[0]).toMatchObject({ attempt: 1, maxAttempts: 3, gaveUp: "notRetryable" });
    expect(f.workers.find((w) => w.workerId === "w2")?.lastSeenAt).toBe(NOW - 7 * 60_000);
    const served = deriveDonorState(facts({ farm: { watched: true, overview: overview({ lanes: [{ routingKey: "p", capabilities: ["demo.primes"], pending: 1, running: 0 }] }) } }));
    expect(served.farm.figures?.lanes[0].servable).toBe(true);
    // the farm's own answer (it looked at every worker, the list holds only the first ones) wins over the list
    const says = (servable: boolean) =>
      deriveDonorState(facts({ farm: { watched: true, overview: overview({ lanes: [{ routingKey: "p", capabilities: ["demo.primes"], pending: 1, running: 0, servable }] }) } }))
        .farm.figures?.lanes[0].servable;
    expect([says(false), says(true)]).toEqual([false, true]);
  });

  it("names the job type no online worker handles, as the server routes it (type + required capabilities, one worker offering all)", () => {
    const lanes = [
      { routingKey: "recipe.nosuch", capabilities: ["recipe.nosuch"], pending: 1, running: 0 },
      { routingKey: "demo.primes,gpu", capabilities: ["demo.primes", "gpu"], pending: 1, running: 0 },
      { routingKey: "demo.primes", capabilities: ["demo.primes"], pending: 1, running: 0 },
    ];
    const workers = [
      { workerId: "w1", name: "me", isMe: true, online: true, revoked: false, lastSeenAt: NOW - 500, maxConcurrentJobs: 2, capabilities: ["demo.primes"] },
      { workerId: "w2", name: "gpu box", isMe: false, online: true, revoked: false, lastSeenAt: NOW - 500, maxConcurrentJobs: 2, capabilities: ["demo.echo", "gpu"] },
    ];
    const f = deriveDonorState(facts({ farm: { watched: true, overview: overview({ lanes, workers }), answeredAt: NOW } })).farm.figures!;
    expect(f.lanes.map(laneWaitNote)).toEqual(["no online worker handles recipe.nosuch", "no online worker can run these", undefined]);
    // a worker whose capabilities are unknown (an older server) may run anything: no lane is flagged
    const unknown = deriveDonorState(facts({ farm: { watched: true, overview: overview({ lanes, workers: [{ ...workers[0], capabilities: undefined }] }), answeredAt: NOW } }));
    expect(unknown.farm.figures!.lanes.map(laneWaitNote)).toEqual([undefined, undefined, undefined]);
  });

  it("not joined shows nothing of a farm; the join toast says what the status bar says", () => {
    const out = deriveDonorState(facts({ joined: false, engine: undefined }));
    expect(out.status).toEqual({ kind: "notJoined" });
    expect(out.toggle).toBe("join");
    expect(out.farm).toEqual({ freshness: { kind: "notWatched" } });
    expect(joinedMessage(deriveDonorState(facts({ wanted: false, decision: { donate: false, off: true }, engine: undefined })))).toMatch(/Click Farmhand in the status bar to start donating/);
    const on = joinedMessage(deriveDonorState(facts({ engine: undefined })));
    expect(on).toBe("Farmhand: joined the farm; donating is starting: connecting to the farm.");
    expect(on).not.toMatch(/start donating/);
  });

  it("lays the throughput out per minute as of this machine's clock, oldest first, dropping what is older than an hour", () => {
    const minute = 60_000;
    const throughput = [
      { minuteStart: NOW - 61 * minute, finished: 9 }, // more than an hour ago
      { minuteStart: NOW - 59 * minute, finished: 2 },
      { minuteStart: NOW, finished: 5 },
    ];
    const at = (now: number) => deriveDonorState(facts({ now, farm: { watched: true, overview: overview({ throughput }), answeredAt: NOW } })).farm.figures!;
    const series = at(NOW).throughput;
    expect(series).toHaveLength(60);
    expect([series[0], series[59], series.reduce((a, b) => a + b, 0), at(NOW).finishedLastHour]).toEqual([2, 5, 7, 7]);
    // the same answer ten minutes later (no summary refresh since: nothing happened): the old minutes slide out
    expect(at(NOW + 10 * minute).finishedLastHour).toBe(5);
    expect(at(NOW + 61 * minute).finishedLastHour).toBe(0);
  });
});

describe("the donor state: apps and this week's credit (issues 12 and 14)", () => {
  it("says whether this machine runs the farm's apps, and what the switch does", () => {
    const off = deriveDonorState(facts());
    expect(off.runsApps).toBe(false);
    expect([appsText(off.runsApps), appsButtonLabel(off.runsApps)]).toEqual(["Runs the farm's apps: no", "Allow apps"]);
    const on = deriveDonorState(facts({ runsApps: true }));
    expect(on.runsApps).toBe(true);
    expect([appsText(on.runsApps), appsButtonLabel(on.runsApps)]).toEqual(["Runs the farm's apps: yes", "Stop running apps"]);
  });

  it("carries the farm's credit for this week into the state, in CPU-hours with one decimal", () => {
    const credit = { days: [{ day: TODAY, cpuHours: 0.2849, jobs: 7 }] };
    const state = deriveDonorState(facts({ farm: { watched: true, overview: overview({ credit }), answeredAt: NOW } }));
    expect(state.credit).toEqual({ cpuHours: 0.2849, jobs: 7 });
    expect(creditText(state.credit!)).toBe("This machine gave 0.3 CPU-hours this week, 7 jobs");
    expect(creditText({ cpuHours: 0, jobs: 0 })).toBe("This machine gave 0.0 CPU-hours this week, 0 jobs");
    // a few short jobs are not "0.0"
    expect(creditText({ cpuHours: 0.04, jobs: 3 })).toBe("This machine gave 0.04 CPU-hours this week, 3 jobs");
    expect(creditText({ cpuHours: 0.001, jobs: 1 })).toBe("This machine gave under 0.01 CPU-hours this week, 1 job");
    expect(creditText({ cpuHours: 12.25, jobs: 1200 })).toBe("This machine gave 12.3 CPU-hours this week, 1200 jobs");
  });

  it("shows this week's energy in kWh next to the credit, labelled by how this machine finds it (measured or estimated)", () => {
    const credit = { days: [{ day: TODAY, cpuHours: 1, jobs: 2, energyJ: 90_000 }, { day: TODAY - 7, cpuHours: 5, jobs: 9, energyJ: 1e9 }] };
    const farm = { watched: true, overview: overview({ credit }), answeredAt: NOW };
    const estimated = deriveDonorState(facts({ farm, energy: { method: "estimated", source: "an estimate at 10 W per busy core" } })).credit!;
    expect(estimated.energyKWh).toBeCloseTo(0.025);
    expect(creditText(estimated)).toBe("This machine gave 1.0 CPU-hours this week, 2 jobs, about 0.025 kWh (estimated: CPU time at 10 W per busy core)");
    const measured = deriveDonorState(facts({ farm, energy: { method: "measured", source: "RAPL (intel-rapl:0)" } })).credit!;
    expect(creditText(measured)).toBe("This machine gave 1.0 CPU-hours this week, 2 jobs, 0.025 kWh (measured: RAPL (intel-rapl:0))");
    // an older farm reports no energy, and this machine's gauge is not known yet: nothing is said of it
    expect(creditText(deriveDonorState(facts({ farm: { watched: true, overview: overview({ credit: { days: [{ day: TODAY, cpuHours: 1, jobs: 2 }] } }), answeredAt: NOW } })).credit!)).toBe(
      "This machine gave 1.0 CPU-hours this week, 2 jobs",
    );
    expect(kWh(0)).toBe("0 kWh");
    expect(kWh(0.0004)).toBe("under 0.001 kWh");
    expect(kWh(1.234)).toBe("1.2 kWh");
    expect(kWh(12.6)).toBe("13 kWh");
  });

  it("shows no credit before the farm said, nor for a key the farm refused or a machine that left", () => {
    expect(deriveDonorState(facts()).credit).toBeUndefined();
    const credit = { days: [{ day: TODAY, cpuHours: 1, jobs: 2 }] };
    const refused = { kind: "refused" as const, message: "key revoked", code: "UNAUTHORIZED" };
    expect(deriveDonorState(facts({ farm: { watched: true, overview: overview({ credit }), error: refused } })).credit).toBeUndefined();
    expect(deriveDonorState(facts({ joined: false, farm: { watched: true, overview: overview({ credit }) } })).credit).toBeUndefined();
  });

  it("sums this week's days by this machine's clock: the same answer turns to 0 on Monday (no re-run needed)", () => {
    // NOW is Monday 2026-11-23; the summary was written on Sunday the 29th with Monday..Sunday's days
    const DAY = 86_400_000;
    const credit = { days: [0, 2, 6].map((d) => ({ day: TODAY + d, cpuHours: 1, jobs: d + 1 })) };
    const on = (now: number) => deriveDonorState(facts({ now, farm: { watched: true, overview: overview({ credit }), answeredAt: NOW } })).credit;
    expect(on(NOW + 6 * DAY)).toEqual({ cpuHours: 3, jobs: 1 + 3 + 7 });
    expect(on(NOW + 2 * DAY)).toEqual({ cpuHours: 2, jobs: 1 + 3 }); // a day ahead is not counted yet
    expect(on(NOW + 7 * DAY)).toEqual({ cpuHours: 0, jobs: 0 }); // next Monday
  });
});

describe("the donor state: presence as the farm knows it, as of this machine's clock (issue 24)", () => {
  const MIN = 60_000;
  const workers = (now: number, over: Partial<OverviewFacts["workers"][number]> = {}) =>
    deriveDonorState(
      facts({ now, farm: { watched: true, overview: overview({ workers: [{ workerId: "w3", name: "cli", isMe: false, revoked: false, lastSeenAt: NOW, maxConcurrentJobs: 2, ...over }] }), answeredAt: NOW } }),
    ).farm.figures!;

  it("a worker is online only within the window since its last call: the same answer shows it offline later", () => {
    expect(workers(NOW + 5 * MIN).workers[0]).toMatchObject({ online: true });
    expect(workers(NOW + 5 * MIN).workersOnline).toBe(1);
    const later = workers(NOW + 7 * MIN);
    expect(later.workers[0]).toMatchObject({ online: false, lastSeenAt: NOW });
    expect(later.workersOnline).toBe(0);
    expect(workerText(later.workers[0], NOW + 7 * MIN)).toBe("offline · last seen 7 min ago");
  });

  it("a worker that said it stopped is offline at once, and says since when", () => {
    const f = workers(NOW + 3_000, { stoppedAt: NOW });
    expect(f.workers[0]).toMatchObject({ online: false, stoppedAt: NOW });
    expect(workerText(f.workers[0], NOW + 3 * MIN)).toBe("offline · stopped 3 min ago");
  });

  it("an online worker's row says when the farm last heard from it, and that age moves with the clock", () => {
    const w = workers(NOW + 40_000).workers[0];
    expect(workerText(w, NOW + 40_000)).toBe("online · up to 2 jobs · seen 40 s ago");
    expect(workerText(w, NOW + 41_000)).toBe("online · up to 2 jobs · seen 41 s ago");
  });
});

describe("the policy line says where the preset comes from (issue 24: the demo's preset trap)", () => {
  const line = (presetFrom?: PresetSource) =>
    policyText({ preset: "full", ...(presetFrom ? { presetFrom } : {}), concurrency: 4, runsUpTo: 4, idleMinutes: 0, otherCpuPercent: 80, donateOnBattery: true, problems: [] });

  it.each([
    ["default", "full preset (the default) · "],
    ["user", "full preset (from User settings) · "],
    ["remote", "full preset (from Remote settings) · "],
    ["workspaceIgnored", "full preset (the default: the workspace's value does not count for a machine setting) · "],
  ] as const)("%s", (from, start) => {
    expect(line(from).startsWith(start)).toBe(true);
  });

  it("the state carries it from the policy facts to every surface", () => {
    const state = deriveDonorState(facts({ policy: { preset: "full", presetFrom: "remote", concurrency: 1, idleMinutes: 0, otherCpuPercent: 80, donateOnBattery: true, problems: [] } }));
    expect(state.policy.presetFrom).toBe("remote");
  });
});

describe("which headline wins when several hold", () => {
  it("an engine that paused itself and lost the farm is auto-paused (Resume is what it needs), not offline", () => {
    const since = NOW - 60_000;
    const both = deriveDonorState(facts({ engine: engine({ phase: "paused", reason: "5 failures in a row", connection: { kind: "down", since }, jobs: [job("a")] }) }));
    expect(both.status).toEqual({ kind: "autoPaused", jobs: 1, reason: "5 failures in a row" });
    expect(both.toggle).toBe("resume");
    // the connection alone is offline; the pause alone is auto-paused
    expect(deriveDonorState(facts({ engine: engine({ connection: { kind: "down", since } }) })).status.kind).toBe("offline");
    expect(deriveDonorState(facts({ engine: engine({ phase: "paused" }) })).status.kind).toBe("autoPaused");
  });
});
