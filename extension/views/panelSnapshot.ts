import type { DeadLetter, Overview } from "../donor/farmData";
import type { PolicyDecision } from "../policy/policy";
import { jobLabel, type WorkerSnapshot } from "../worker";
import { describeStatus, donorStatus, toggleAction } from "../hostAndWebview/donorStatus";
import type { DescribedError } from "../worker/errors";
import type { EngineView } from "../donor/farmSession";
import type { PanelFarm, PanelSnapshot } from "../hostAndWebview/panelProtocol";

export type SnapshotParts = {
  joined: boolean;
  wanted: boolean;
  farmUrl: string;
  decision: PolicyDecision;
  policy: PanelSnapshot["policy"];
  engine: WorkerSnapshot | undefined;
  engineView: EngineView | undefined;
  contribution: PanelSnapshot["contribution"];
  overview: Overview | undefined;
  dead: DeadLetter[];
  farmError: DescribedError | undefined;
  now: number;
};

/** Everything the views show, in one plain object: the status bar, the panel and the API read this. */
export function buildSnapshot(p: SnapshotParts): PanelSnapshot {
  const status = donorStatus({ joined: p.joined, decision: p.decision, engine: p.engineView });
  return {
    joined: p.joined,
    wanted: p.wanted,
    donating: p.decision.donate,
    status,
    statusText: describeStatus(status),
    toggle: toggleAction({ joined: p.joined, wanted: p.wanted, engine: p.engineView }),
    farmUrl: p.farmUrl,
    policy: p.policy,
    jobs: (p.engine?.running ?? []).map((j) => ({
      jobId: j.jobId,
      type: jobLabel(j.type, j.app),
      attempt: j.attempt,
      progress: j.progress,
      status: j.status,
      startedAt: j.startedAt,
      ...(j.suspendedSince === undefined ? {} : { suspendedSince: j.suspendedSince }),
    })),
    contribution: p.contribution,
    farm: p.joined && p.overview ? farmPart(p.overview, p.dead, p.now) : undefined,
    farmError: p.joined ? p.farmError : undefined,
  };
}

function farmPart(o: Overview, dead: DeadLetter[], now: number): PanelFarm {
  return {
    counts: o.counts,
    throughput: perMinute(o.throughput, now),
    finishedLastHour: o.finishedLastHour,
    workers: o.workers.map((w) => ({ name: w.name, online: w.online, isMe: w.isMe })),
    dead: dead.map((d) => ({ jobId: d.jobId, type: d.type, error: d.error, attempts: `${d.attempt}/${d.maxAttempts}` })),
    deadTotal: o.deadLetters,
    canManage: o.canManage,
  };
}

/** The server sends only the minutes that had finishes; the chart wants all 60, oldest first. */
export function perMinute(buckets: Array<{ minuteStart: number; finished: number }>, now: number): number[] {
  const MINUTE = 60_000;
  const current = Math.floor(now / MINUTE);
  const series = new Array<number>(60).fill(0);
  for (const b of buckets) {
    const index = 59 - (current - Math.floor(b.minuteStart / MINUTE));
    if (index >= 0 && index < 60) series[index] += b.finished;
  }
  return series;
}
