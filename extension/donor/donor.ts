import * as vscode from "vscode";
import { cpus } from "node:os";
import { join } from "node:path";
import { presetSource, readDonorSettings, type DonorSettings } from "./donorSettings";
import { LoadGate } from "../policy/loadGate";
import { MachineLock } from "../policy/machineLock";
import { ensurePrivateDir, userStateDir } from "../policy/privateFiles";
import { SharedActivity } from "../policy/sharedActivity";
import { decide, type PolicyDecision } from "../policy/policy";
import { CpuSampler, readOnBattery, readOsIdleMs } from "../policy/probes";
import { DisposableOwner } from "../lifecycle";
import type { DonorFacts } from "../hostAndWebview/deriveDonorState";
import { messageOf } from "../worker/errors";

const SAMPLE_MS = 5_000;
const SAMPLE_UNFOCUSED_MS = 15_000;
const BATTERY_EVERY_MS = 60_000;
const WANTED_KEY = "farmhand.wanted";
const SNOOZE_KEY = "farmhand.snoozedUntil";

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
  private batteryReadAt = 0;
  private osIdleMs: number | undefined;
  private otherCpuLoad: number | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private _decision: PolicyDecision = { donate: false, off: true };
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
        this.evaluate();
      }),
    );
    this._register({ dispose: () => this.stopSampling() });
    this._register({ dispose: () => this.lock?.release() });
  }

  get decision(): PolicyDecision {
    return this._decision;
  }

  get current(): DonorSettings {
    return this.settings;
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
      problems: s.windowErrors,
    };
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
      userIdleMs: Math.min(now - Math.max(this.lastActivityAt, wanted ? (this.activity?.latest() ?? 0) : 0), this.osIdleMs ?? Number.POSITIVE_INFINITY),
      idleMinutes: this.settings.idleMinutes,
      cpuBusy: this.gate.closed,
      otherCpuLoad: this.otherCpuLoad,
    });
    if (wanted) this.scheduleSample();
    else this.stopSampling();
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

  private publish(decision: PolicyDecision): PolicyDecision {
    const before = JSON.stringify(this._decision);
    this._decision = decision;
    if (JSON.stringify(decision) !== before) this.changed.fire(decision);
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
      void readOnBattery().then((v) => (this.onBattery = v));
      void readOsIdleMs().then((v) => (this.osIdleMs = v));
    }
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

