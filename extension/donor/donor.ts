import * as vscode from "vscode";
import { cpus } from "node:os";
import { join } from "node:path";
import { presetSource, readDonorSettings, type DonorSettings } from "./donorSettings";
import { LoadGate } from "../policy/loadGate";
import { MachineLock } from "../policy/machineLock";
import { ensurePrivateDir, userStateDir } from "../policy/privateFiles";
import { SharedActivity } from "../policy/sharedActivity";
import { decide, type PolicyDecision } from "../policy/policy";
import { CpuSampler, readPower } from "../policy/probes";
import { defaultMachineReaders, MachineWatch } from "../policy/machineWatch";
import { MeteredAllowance, type MeteredTally } from "../policy/meteredAllowance";
import { AwayWatch } from "../policy/idle/awayWatch";
import { defaultIdleSources, MachineIdle } from "../policy/idle/machineIdle";
import { sensingText, type Sensing } from "../policy/sensingText";
import { HeatGate, HeatWatch } from "../policy/thermal";
import { DisposableOwner } from "../lifecycle";
import type { DonorFacts } from "../donorState/deriveDonorState";
import { messageOf } from "../worker/errors";

const SAMPLE_MS = 5_000;
const SAMPLE_UNFOCUSED_MS = 15_000;
const BATTERY_EVERY_MS = 60_000;
/** sysfs reads are cheap; macOS's `pmset` is a process, so it is asked less often. */
const THERMAL_EVERY_MS = process.platform === "darwin" ? 30_000 : 5_000;
const WANTED_KEY = "farmhand.wanted";
const SNOOZE_KEY = "farmhand.snoozedUntil";
/** What jobs downloaded today on a metered connection (farmhand.meteredLimitMB), kept over reloads. */
const METERED_KEY = "farmhand.meteredUse";

/**
 * The donor's side of the policy in one window: what the donor asked for (persisted), what the machine
 * says (probes), and the resulting decision with its reason. Samples the machine only while the donor wants
 * to donate; when off it has no timers at all.
 */
export class Donor extends DisposableOwner {
  private readonly changed = this._register(new vscode.EventEmitter<PolicyDecision>());
  readonly onDidChange = this.changed.event;

  private settings: DonorSettings;
  private readonly gate: LoadGate;
  private readonly sampler = new CpuSampler();
  /** Absent when the user's private state folder cannot be used: then this window decides alone. */
  private readonly lock: MachineLock | undefined;
  private readonly activity: SharedActivity | undefined;
  private lastActivityAt = Date.now();
  private onBattery: boolean | undefined;
  private batteryPercent: number | undefined;
  private batteryReadAt = 0;
  /** The programs of farmhand.pauseWhileRunning / pauseGpuWhileRunning that run, and whether the connection is metered. */
  private readonly machineWatch: MachineWatch;
  private readonly meteredSource: string | null;
  /** farmhand.meteredLimitMB and today's tally: the engine spends from it and declares what is left. */
  readonly allowance: MeteredAllowance;
  /** Machine-wide idle time, from the first source on this machine that answers (kept for the window's life). */
  private readonly machineIdle: MachineIdle;
  /** Reads it while the donor wants to donate; a return is noticed within about a second and re-decides at once. */
  private awayWatch: AwayWatch | undefined;
  /** The machine-wide idle source in use; undefined until one answered, null once none is left. */
  private idleSource: string | null | undefined;
  /** farmhand.maxCpuTemperatureC with hysteresis; read while the donor wants to donate. */
  private readonly heat: HeatGate;
  private heatWatch: HeatWatch | undefined;
  private otherCpuLoad: number | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private _decision: PolicyDecision = { donate: false, off: true };
  private published = "";
  /** Share of all cores our own jobs use, where the OS reports no nice time (Windows). */
  ownCpuShare = () => 0;

  constructor(
    private readonly memento: vscode.Memento,
    log: vscode.LogOutputChannel,
    stateDir = userStateDir(),
  ) {
    super();
    this.settings = readDonorSettings(cpus().length);
    this.gate = new LoadGate(this.gateOptions());
    this.heat = new HeatGate(this.settings.maxCpuTemperatureC);
    this.machineIdle = new MachineIdle(defaultIdleSources(), (source) => {
      this.idleSource = source ?? null;
      log.info(source ? `Idle is judged machine-wide by ${source}` : "No machine-wide idle source answers: idle is judged by VS Code activity only on this machine");
    });
    this._register({ dispose: () => this.machineIdle.dispose() });
    this.allowance = new MeteredAllowance(
      { get: () => memento.get<MeteredTally>(METERED_KEY), set: (tally) => void memento.update(METERED_KEY, tally) },
      this.settings.meteredLimitBytes,
    );
    const readers = defaultMachineReaders();
    this.meteredSource = readers.meteredSource;
    this.machineWatch = new MachineWatch(
      readers,
      () => ({ pause: this.settings.pauseWhileRunning, pauseGpu: this.settings.pauseGpuWhileRunning }),
      // a program started or ended, the connection's cost changed: decide again now (jobs freeze at once)
      (seen) => {
        this.allowance.metered = seen.metered;
        this.evaluate();
      },
    );
    this._register({ dispose: () => this.machineWatch.dispose() });
    try {
      ensurePrivateDir(stateDir);
      this.lock = new MachineLock({ path: join(stateDir, "donor.lock"), owner: vscode.env.sessionId });
      this.activity = new SharedActivity(join(stateDir, "activity"));
    } catch (error) {
      log.warn(`One donor per machine is not enforced, and other windows' activity is not seen: ${messageOf(error)}`);
    }
    const touch = () => {
      this.lastActivityAt = Date.now();
      this.activity?.stamp(this.lastActivityAt);
    };
    this._register(vscode.window.onDidChangeTextEditorSelection(touch));
    this._register(vscode.workspace.onDidChangeTextDocument(touch));
    this._register(vscode.window.onDidChangeActiveTextEditor(touch));
    this._register(vscode.window.onDidChangeWindowState((s) => (s.active || s.focused) && touch()));
    this._register(
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (!e.affectsConfiguration("farmhand")) return;
        this.settings = readDonorSettings(cpus().length);
        this.gate.configure(this.gateOptions());
        this.heat.configure(this.settings.maxCpuTemperatureC);
        this.allowance.limitBytes = this.settings.meteredLimitBytes;
        this.awayWatch?.poke();
        this.machineWatch.poke();
        this.evaluate();
      }),
    );
    this._register({ dispose: () => this.stopSampling() });
    this._register({ dispose: () => this.stopAwayWatch() });
    this._register({ dispose: () => this.stopHeatWatch() });
    this._register({ dispose: () => this.lock?.release() });
  }

  get decision(): PolicyDecision {
    return this._decision;
  }

  /** The settings in force now: inside farmhand.quietHours, one job at a time. */
  get current(): DonorSettings {
    const d = this._decision;
    return d.donate && d.quietHours ? { ...this.settings, concurrency: 1 } : this.settings;
  }

  /** The policy in the panel's terms. */
  policySummary(): DonorFacts["policy"] {
    const s = this.settings;
    return {
      preset: s.preset,
      presetFrom: presetSource(),
      concurrency: s.concurrency,
      idleMinutes: s.idleMinutes,
      otherCpuPercent: Math.round(s.otherCpuThreshold * 100),
      donateOnBattery: s.donateOnBattery,
      problems: [...s.windowErrors, ...s.quietHoursErrors.map((e) => `farmhand.quietHours: ${e}`), ...s.programErrors],
      sensing: sensingText({
        idleSource: this.idleSource,
        thermal: this.heatWatch?.latest,
        maxCpuTemperatureC: s.maxCpuTemperatureC,
        tooHot: this.heat.tooHot,
        noThermalReading: this.heatWatch?.readOnce === true && !this.heatWatch.latest,
        quietHours: this._decision.donate && this._decision.quietHours === true,
        ...this.machineSensing(),
      }),
    };
  }

  /** What the machine watch adds to the sensing line: the connection's cost and the program lists. */
  private machineSensing(): Pick<Sensing, "metered" | "programs"> {
    const s = this.settings;
    const seen = this.machineWatch.latest;
    const watching = s.pauseWhileRunning.length + s.pauseGpuWhileRunning.length > 0;
    return {
      metered: this.wanted ? { source: this.meteredSource, metered: seen.metered, leftBytes: this.allowance.left(), limitBytes: s.meteredLimitBytes } : undefined,
      programs: watching && this.wanted ? { unreadable: seen.programsUnreadable === true, gpuProgram: seen.gpuProgram } : undefined,
    };
  }

  /** A program of farmhand.pauseGpuWhileRunning that runs now: GPU jobs are frozen and none is taken. */
  get gpuProgram(): string | undefined {
    return this.wanted ? this.machineWatch.latest.gpuProgram : undefined;
  }

  /** farmhand.meteredLimitMB in bytes while the connection is metered; undefined while it is not. */
  get meteredLimit(): number | undefined {
    return this.allowance.metered === true ? this.settings.meteredLimitBytes : undefined;
  }

  get wanted(): boolean {
    return this.memento.get<boolean>(WANTED_KEY, false);
  }

  get snoozedUntil(): number | undefined {
    const until = this.memento.get<number>(SNOOZE_KEY);
    return until && until > Date.now() ? until : undefined;
  }

  async setWanted(wanted: boolean): Promise<void> {
    await this.memento.update(WANTED_KEY, wanted);
    if (!wanted) await this.memento.update(SNOOZE_KEY, undefined);
    this.evaluate();
  }

  async snooze(ms: number): Promise<void> {
    await this.memento.update(SNOOZE_KEY, Date.now() + ms);
    this.evaluate();
  }

  /** Re-read everything and decide; schedules the next sample while the donor wants to donate. */
  evaluate(): PolicyDecision {
    const now = Date.now();
    const wanted = this.wanted;
    if (wanted) this.sample(now);
    const holder = wanted ? this.lock?.holder() : undefined;
    const decision = decide({
      now,
      wanted,
      snoozedUntil: this.snoozedUntil,
      remoteWindow: vscode.env.remoteName !== undefined,
      allowRemote: this.settings.allowRemoteDonation,
      otherWindowDonates: holder !== undefined && holder.owner !== vscode.env.sessionId,
      windows: this.settings.windows,
      windowProblems: this.settings.windowErrors,
      onBattery: this.onBattery,
      donateOnBattery: this.settings.donateOnBattery,
      batteryPercent: this.batteryPercent,
      minBatteryPercent: this.settings.minBatteryPercent,
      exclusiveProgram: wanted ? this.machineWatch.latest.program : undefined,
      ...(wanted && this.allowance.metered ? { metered: { limitBytes: this.settings.meteredLimitBytes, usedBytes: this.allowance.usedToday() } } : {}),
      userIdleMs: Math.min(now - Math.max(this.lastActivityAt, wanted ? (this.activity?.latest() ?? 0) : 0), this.machineIdleMs(now)),
      idleMinutes: this.settings.idleMinutes,
      screenLocked: wanted && this.awayWatch?.latest?.reading.locked === true,
      cpuBusy: this.gate.closed,
      otherCpuLoad: this.otherCpuLoad,
      tooHot: wanted && this.heat.tooHot,
      cpuCelsius: this.heatWatch?.latest?.celsius,
      maxCpuCelsius: this.settings.maxCpuTemperatureC,
      quietHours: this.settings.quietHours,
    });
    if (wanted) {
      this.scheduleSample();
      this.startAwayWatch();
      this.startHeatWatch();
      this.machineWatch.start();
    } else {
      this.stopSampling();
      this.stopAwayWatch();
      this.stopHeatWatch();
      this.machineWatch.stop();
      this.allowance.metered = undefined;
    }
    if (decision.donate && !this.tryLock()) {
      return this.publish({ donate: false, reason: "another VS Code window on this machine is donating", cause: "otherWindow" });
    }
    if (!decision.donate) this.lock?.release();
    return this.publish(decision);
  }

  /** One donor per machine; if the lock file cannot be used at all, donate rather than never. */
  private tryLock(): boolean {
    try {
      return this.lock?.tryAcquire() ?? true;
    } catch {
      return true;
    }
  }

  /** Says so when the decision changed, or what the engine is told beside it (the GPU held for a program, the metered limit). */
  private publish(decision: PolicyDecision): PolicyDecision {
    const before = this.published;
    this._decision = decision;
    this.published = JSON.stringify([decision, this.gpuProgram, this.meteredLimit]);
    if (this.published !== before) this.changed.fire(decision);
    return decision;
  }

  private sample(now: number): void {
    const cpu = this.sampler.sample();
    if (cpu !== undefined) {
      const own = process.platform === "win32" ? this.ownCpuShare() : cpu.niced;
      this.otherCpuLoad = Math.max(0, cpu.busy - own);
      this.gate.sample(this.otherCpuLoad, now);
    }
    if (now - this.batteryReadAt >= BATTERY_EVERY_MS) {
      this.batteryReadAt = now;
      void readPower().then((power) => {
        this.onBattery = power.onBattery;
        this.batteryPercent = power.percent;
      });
    }
  }

  /** Machine-wide idle now: the last reading plus the time since (no input since, or it would have been seen). */
  private machineIdleMs(now: number): number {
    const latest = this.awayWatch?.latest;
    if (latest?.reading.fullscreen) return 0; // a video, a game, a presentation: the owner is there
    return latest ? latest.reading.idleMs + Math.max(0, now - latest.reading.at) : Number.POSITIVE_INFINITY;
  }

  private startAwayWatch(): void {
    if (this.awayWatch || this.machineIdle.exhausted) return;
    this.awayWatch = new AwayWatch(this.machineIdle, {
      thresholdMs: () => this.settings.idleMinutes * 60_000,
      slowPollMs: SAMPLE_MS,
      // Away ↔ present (or no source left): decide again now, not at the next sample, so jobs freeze at once.
      onChange: () => this.evaluate(),
    });
    this.awayWatch.start();
  }

  private stopAwayWatch(): void {
    this.awayWatch?.dispose();
    this.awayWatch = undefined;
  }

  private startHeatWatch(): void {
    if (this.heatWatch) return;
    // Hot ↔ cool: decide again now, so jobs freeze (or thaw) without waiting for the next sample.
    this.heatWatch = new HeatWatch(this.heat, () => this.evaluate(), THERMAL_EVERY_MS);
    this.heatWatch.start();
  }

  private stopHeatWatch(): void {
    this.heatWatch?.dispose();
    this.heatWatch = undefined;
  }

  private scheduleSample(): void {
    if (this.timer) return;
    const every = vscode.window.state.focused ? SAMPLE_MS : SAMPLE_UNFOCUSED_MS;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.evaluate();
    }, every);
  }

  private stopSampling(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private gateOptions() {
    return { threshold: this.settings.otherCpuThreshold, pauseAfterMs: 10_000, resumeAfterMs: 60_000 };
  }
}

