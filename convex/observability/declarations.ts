/**
 * Every metric GET /api/metrics exposes, declared once: its name, Prometheus type, help text and labels. The
 * scrape (observability/scrape.ts) gives samples only of these; the exposition writes HELP and TYPE from here.
 * `type` and `client` label values are bounded: the 100 busiest values, the rest `other` (observability/labels.ts).
 */

export type MetricType = "counter" | "gauge" | "histogram";
export type Declaration = { type: MetricType; help: string; labels: readonly string[] };

export const METRICS = {
  farmhand_jobs: {
    type: "gauge",
    help: "Jobs in each status now, by job type and client key (none: submitted by the host app).",
    labels: ["status", "type", "client"],
  },
  farmhand_queue_oldest_ready_age_seconds: {
    type: "gauge",
    help: "How long the oldest job ready to run has waited, by job type (0: none ready).",
    labels: ["type"],
  },
  farmhand_jobs_finished_total: {
    type: "counter",
    help: "Jobs that ended, by job type, client key and outcome (succeeded, dead, canceled).",
    labels: ["type", "client", "outcome"],
  },
  farmhand_job_wait_seconds: {
    type: "histogram",
    help: "Time from ready to started (queue wait) of each claim, by job type.",
    labels: ["type"],
  },
  farmhand_job_run_seconds: {
    type: "histogram",
    help: "Time from started to the end of each run (done, failed, given back or lease expired), by job type.",
    labels: ["type"],
  },
  farmhand_workers: {
    type: "gauge",
    help: "Workers by state: idle, busy, suspended (its jobs frozen for its owner), paused (takes nothing), offline.",
    labels: ["state"],
  },
  farmhand_slots: {
    type: "gauge",
    help: "Job slots of online workers: busy (running a job) or free (declared and unused).",
    labels: ["state"],
  },
  farmhand_retries_total: { type: "counter", help: "Failed attempts that were retried.", labels: [] },
  farmhand_cache_hits_total: { type: "counter", help: "Jobs answered from the result cache, or from an identical job in flight, without running.", labels: [] },
  farmhand_lease_expiries_total: { type: "counter", help: "Runs whose lease ran out without a heartbeat.", labels: [] },
  farmhand_offer_expiries_total: { type: "counter", help: "Offers to a worker that it did not claim in time.", labels: [] },
  farmhand_watchdog_rearms_total: {
    type: "counter",
    help: "Stalled loops the watchdog re-armed, by loop (dispatcher, summary, bulk, webhook, settlement).",
    labels: ["loop"],
  },
  farmhand_replicated_results_total: {
    type: "counter",
    help: "Results of replicated jobs judged, by verdict (valid, invalid, no_quorum).",
    labels: ["verdict"],
  },
  farmhand_webhook_deliveries_total: {
    type: "counter",
    help: "Webhook delivery attempts, by outcome (delivered, failed: retried later, abandoned: given up).",
    labels: ["outcome"],
  },
  farmhand_metrics_updated_timestamp_seconds: {
    type: "gauge",
    help: "When these figures were last brought up to date (they lag the farm by a few seconds).",
    labels: [],
  },
} as const satisfies Record<string, Declaration>;

export type MetricName = keyof typeof METRICS;
