import { workerStateAt, type ConsoleLeaderboard, type ConsoleState, type ConsoleWorker } from "../../extension/protocol/consoleProtocol";
import { button, el, hours, post, scrolling, table, when } from "./dom";

/** "8 cores · 16.0 GB · linux/x64 · NVIDIA RTX 4090 (24.0 GB)", or "not reported". */
function hardware(facts: ConsoleWorker["facts"]): string {
  if (!facts) return "not reported";
  const gb = (mb: number) => `${(mb / 1024).toFixed(1)} GB`;
  const gpus = facts.gpus.map((g) => `${g.model} (${gb(g.vramMB)})`);
  return [`${facts.cores} cores`, gb(facts.memoryMB), `${facts.os}/${facts.arch}`, ...gpus].join(" · ");
}

export function workersPage({ workers, workersPaging, leaderboard }: ConsoleState, parts: Node[], now: number): void {
  if (!workers) return void parts.push(el("p", "Loading…"));
  const rows = workers.map((w) => [
    w.name + (w.isMe ? " (this machine)" : ""),
    workerStateAt(w, now),
    when(w.lastSeenAt),
    w.advertisedCapabilities.join(", "),
    hardware(w.facts),
    `${w.slotsInUse}/${w.maxConcurrentJobs}`,
    String(w.jobsDone),
    hours(w.cpuMs),
    w.revoked || w.isMe ? "" : button("Revoke…", () => post({ type: "revokeWorker", workerId: w.workerId }), { secondary: "", class: "revoke", "data-for": w.workerId }),
  ]);
  // the last column fits its button whatever the width (a share of a narrow editor cut Revoke… off)
  const workersTable = table(["Worker", "State", "Last seen", "Capabilities", "Hardware", "Slots in use", "Jobs done", "CPU given", ""], rows, { id: "workers" }, [
    "17%", "7%", "14%", "12%", "16%", "8%", "7%", "8%", "112px",
  ]);
  parts.push(scrolling(workersTable, "wide"));
  if (workersPaging && (workersPaging.page > 0 || workersPaging.hasOlder)) {
    const pager = el("div", undefined, { class: "actions pager" });
    if (workersPaging.page > 0) pager.append(button("Newer", () => post({ type: "workersPage", to: "newer" }), { id: "workers-newer", secondary: "" }));
    if (workersPaging.hasOlder) pager.append(button("Older", () => post({ type: "workersPage", to: "older" }), { id: "workers-older", secondary: "" }));
    parts.push(pager);
  }
  if (!leaderboard) return;
  const board = (rows: ConsoleLeaderboard["week"]) =>
    rows.length === 0 ? [["nobody yet", "", ""]] : rows.map((r, i) => [`${i + 1}. ${r.name}`, hours(r.cpuMs) + (r.wallMs > 0 ? ` (${hours(r.wallMs)} by wall time)` : ""), String(r.jobs)]);
  parts.push(
    el("h2", "Who gave most this week (from Monday 00:00 UTC)"),
    table(["Worker", "CPU given", "Jobs"], board(leaderboard.week), { id: "leaderboard-week" }),
    el("h2", "All time"),
    table(["Worker", "CPU given", "Jobs"], board(leaderboard.allTime), { id: "leaderboard-all" }),
  );
}
