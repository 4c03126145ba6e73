import { workerStateAt, type ConsoleLeaderboard, type ConsoleState, type ConsoleWorker, type ConsoleWorkerTrust } from "../../extension/protocol/consoleProtocol";
import { button, el, hours, post, scrolling, table, when } from "./dom";
import { kwh } from "./energySection";

/** "8 cores · 16.0 GB · linux/x64 · NVIDIA RTX 4090 (24.0 GB)", or "not reported". */
function hardware(facts: ConsoleWorker["facts"]): string {
  if (!facts) return "not reported";
  const gb = (mb: number) => `${(mb / 1024).toFixed(1)} GB`;
  const gpus = facts.gpus.map((g) => `${g.model} (${gb(g.vramMB)})`);
  return [`${facts.cores} cores`, gb(facts.memoryMB), `${facts.os}/${facts.arch}`, ...gpus].join(" · ");
}

/** Its lowest streak and job type ("0 demo.echo +2"), every streak on hover; "—" before any checked result. */
function streakCell(trust: ConsoleWorkerTrust | undefined): string | Node {
  if (!trust || trust.streaks.length === 0) return "—";
  const [lowest] = trust.streaks;
  const others = trust.streaks.length - 1;
  const text = `${lowest.streak} ${lowest.type}${others > 0 || trust.moreStreaks ? ` +${others}${trust.moreStreaks ? "…" : ""}` : ""}`;
  const all = trust.streaks.map((s) => `${s.type}: streak ${s.streak}${s.trusted ? " (trusted)" : ""}${s.invalid > 0 ? `, ${s.invalid} invalid` : ""}`);
  return el("span", text, { class: "streak", title: all.join("\n") + (trust.moreStreaks ? "\n…" : "") });
}

/** "full", or while an invalid result keeps it reduced "12/1250 (÷4)": today's claims (UTC) / the limit, and by how much it was cut. */
function quotaCell(trust: ConsoleWorkerTrust | undefined, now: number): string | Node {
  if (!trust) return "—";
  const { limit, full, halvings, lastDay } = trust.quota;
  if (limit >= full) return el("span", "full", { title: `full: ${full} jobs a day` });
  const used = lastDay && lastDay.day === Math.floor(now / 86_400_000) ? lastDay.claimed : 0;
  const title = `${used} of ${limit} jobs claimed today (UTC); halved ${halvings} time(s) by invalid results from ${full}, doubled back by each valid one`;
  return el("span", `${used}/${limit} (÷${2 ** halvings})`, { class: "quota-halved", title });
}

/** "just now", "5m ago", "3h ago", "2d ago" (the page is drawn afresh every 15 s); the full time on hover. */
function seen(at: number | undefined, now: number): string | Node {
  if (at === undefined) return "—";
  const minutes = Math.max(0, Math.floor((now - at) / 60_000));
  const text = minutes < 1 ? "just now" : minutes < 60 ? `${minutes}m ago` : minutes < 48 * 60 ? `${Math.floor(minutes / 60)}h ago` : `${Math.floor(minutes / 1440)}d ago`;
  return el("span", text, { title: when(at) });
}

export function workersPage({ workers, workersPaging, leaderboard }: ConsoleState, parts: Node[], now: number): void {
  if (!workers) return void parts.push(el("p", "Loading…"));
  const rows = workers.map((w) => [
    w.name + (w.isMe ? " (this machine)" : ""),
    workerStateAt(w, now),
    seen(w.lastSeenAt, now),
    w.advertisedCapabilities.join(", "),
    hardware(w.facts),
    `${w.slotsInUse}/${w.maxConcurrentJobs}`,
    String(w.jobsDone),
    hours(w.cpuMs),
    kwh(w.energyJ),
    streakCell(w.trust),
    quotaCell(w.trust, now),
    w.revoked || w.isMe ? "" : button("Revoke…", () => post({ type: "revokeWorker", workerId: w.workerId }), { secondary: "", class: "revoke", "data-for": w.workerId }),
  ]);
  // the last column fits its button whatever the width (a share of a narrow editor cut Revoke… off)
  // short headers: twelve columns fit 1024 px (the cells' full text is their tooltip)
  // (Quota: the daily job quota, its detail on hover; Energy: all time, measured or estimated by the worker)
  const headers = ["Worker", "State", "Seen", "Capabilities", "Hardware", "Slots", "Jobs", "CPU", "Energy", "Streak", "Quota", ""];
  const workersTable = table(headers, rows, { id: "workers" }, ["17%", "7%", "7%", "10%", "12%", "5%", "5%", "6%", "7%", "7%", "7%", "112px"]);
  parts.push(scrolling(workersTable, "wide"));
  if (workersPaging && (workersPaging.page > 0 || workersPaging.hasOlder)) {
    const pager = el("div", undefined, { class: "actions pager" });
    if (workersPaging.page > 0) pager.append(button("Newer", () => post({ type: "workersPage", to: "newer" }), { id: "workers-newer", secondary: "" }));
    if (workersPaging.hasOlder) pager.append(button("Older", () => post({ type: "workersPage", to: "older" }), { id: "workers-older", secondary: "" }));
    parts.push(pager);
  }
  if (!leaderboard) return;
  const board = (rows: ConsoleLeaderboard["week"]) =>
    rows.length === 0
      ? [["nobody yet", "", "", ""]]
      : rows.map((r, i) => [`${i + 1}. ${r.name}`, hours(r.cpuMs) + (r.wallMs > 0 ? ` (${hours(r.wallMs)} by wall time)` : ""), kwh(r.energyJ), String(r.jobs)]);
  parts.push(
    el("h2", "Who gave most this week (from Monday 00:00 UTC)"),
    table(["Worker", "CPU given", "Energy", "Jobs"], board(leaderboard.week), { id: "leaderboard-week" }),
    el("h2", "All time"),
    table(["Worker", "CPU given", "Energy", "Jobs"], board(leaderboard.allTime), { id: "leaderboard-all" }),
  );
}
