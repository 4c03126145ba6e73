import type { PolicyDecision } from "../policy/policy";

/** What the donor sees in one word (plus a reason): the status bar, the panel and the tree all show this. */
export type DonorStatus =
  | { kind: "notJoined" }
  | { kind: "off" }
  | { kind: "paused"; reason: string }
  | { kind: "offline"; reason?: string }
  | { kind: "waiting" }
  | { kind: "working"; jobs: number };

export type DonorFacts = {
  joined: boolean;
  decision: PolicyDecision;
  /** The engine's view; undefined while it is not running. */
  engine?: { connected: boolean; running: number; pausedReason?: string; stoppedReason?: string };
};

export function donorStatus({ joined, decision, engine }: DonorFacts): DonorStatus {
  if (!joined) return { kind: "notJoined" };
  if (!decision.donate) return "off" in decision && decision.off ? { kind: "off" } : { kind: "paused", reason: decision.reason };
  if (engine?.pausedReason) return { kind: "paused", reason: engine.pausedReason };
  if (engine?.stoppedReason) return { kind: "offline", reason: engine.stoppedReason };
  if (engine && !engine.connected) return { kind: "offline" };
  if (engine && engine.running > 0) return { kind: "working", jobs: engine.running };
  return { kind: "waiting" };
}

export function describeStatus(status: DonorStatus): string {
  switch (status.kind) {
    case "notJoined":
      return "not joined";
    case "off":
      return "off";
    case "paused":
      return `paused: ${status.reason}`;
    case "offline":
      return status.reason ? `offline: ${status.reason}` : "offline";
    case "waiting":
      return "waiting for work";
    case "working":
      return `working (${status.jobs} ${status.jobs === 1 ? "job" : "jobs"})`;
  }
}
