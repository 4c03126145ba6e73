/**
 * A connection since it was opened, as one state (instead of an "ever connected" flag beside a "disconnected
 * since" time): never up yet (waiting since it was opened), up, or down since it was lost (or, for one that never
 * came up, since it was opened).
 */
export type ConnectionHistory = { kind: "never"; since: number } | { kind: "online" } | { kind: "down"; since: number };

export function opened(now: number): ConnectionHistory {
  return { kind: "never", since: now };
}

/** Up: online. Down: a connection that was up is down from now; one already down, or never up, keeps its time. */
export function connectionChanged(history: ConnectionHistory, connected: boolean, now: number): ConnectionHistory {
  if (connected) return { kind: "online" };
  return history.kind === "online" ? { kind: "down", since: now } : history;
}

/** The wait for a first connection is over: one that never came up is down since it was opened. */
export function firstConnectMissed(history: ConnectionHistory): ConnectionHistory {
  return history.kind === "never" ? { kind: "down", since: history.since } : history;
}
