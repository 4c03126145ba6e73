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

/**
 * While jobs are frozen because the machine's owner is using it: the status text, and what is held (one line per
 * job, for the tooltip). Undefined when nothing is frozen.
 */
export function suspendedText(jobs: ReadonlyArray<{ type: string; suspendedSince?: number }>, now: number): { text: string; held: string[] } | undefined {
  const frozen = jobs.filter((j) => j.suspendedSince !== undefined);
  if (frozen.length === 0) return undefined;
  const held = frozen.map((j) => `${j.type}, frozen ${forHowLong(now - j.suspendedSince!)}`);
  return { text: "suspended — you are using this machine", held };
}

function forHowLong(ms: number): string {
  const minutes = Math.floor(Math.max(0, ms) / 60_000);
  return minutes < 1 ? "just now" : `${minutes} min`;
}

/** What clicking the status-bar item or the panel's main button does now. */
export type ToggleAction = "join" | "start" | "stop" | "resume";

export function toggleAction({ joined, wanted, engine }: { joined: boolean; wanted: boolean; engine?: DonorFacts["engine"] }): ToggleAction {
  if (!joined) return "join";
  // The engine paused itself (jobs kept failing): a click takes work again, it does not switch donating off.
  if (engine?.pausedReason) return "resume";
  return wanted ? "stop" : "start";
}

export const TOGGLE_LABEL: Record<ToggleAction, string> = {
  join: "Join a Farm…",
  start: "Start donating",
  stop: "Stop donating",
  resume: "Resume",
};

/** Why the farm's own data (queue, workers, dead letters) cannot be shown, by kind: each reads differently. */
export function farmProblemText(problem: { kind: string; message: string }): string {
  switch (problem.kind) {
    case "unreachable":
      return `Cannot reach the farm: ${problem.message}`;
    case "refused":
      return `The farm refused this machine's key: ${problem.message}. Join again with a new token from your operator.`;
    case "notAllowed":
      return `This machine's key may not read the farm: ${problem.message}`;
    default:
      return `The farm answered with an error: ${problem.message}`;
  }
}
