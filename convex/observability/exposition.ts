import { METRICS, type MetricName } from "./declarations";
import { DURATION_BOUNDS_S } from "./histogram";
import type { Histogram } from "./rows";

/** Prometheus's text exposition format, version 0.0.4 (https://prometheus.io/docs/instrumenting/exposition_formats/). */

export const EXPOSITION_CONTENT_TYPE = "text/plain; version=0.0.4";

export type Labels = Record<string, string>;
export type Sample = { labels: Labels; value: number };
export type HistogramSeries = { labels: Labels; times: Histogram };
/** What a scrape found: samples of each gauge and counter, series of each histogram, by metric name. */
export type Families = Partial<Record<MetricName, Sample[] | HistogramSeries[]>>;

const escape = (value: string) => value.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');

function labelText(labels: Labels): string {
  const parts = Object.entries(labels).map(([k, v]) => `${k}="${escape(v)}"`);
  return parts.length === 0 ? "" : `{${parts.join(",")}}`;
}

function number(value: number): string {
  if (value === Number.POSITIVE_INFINITY) return "+Inf";
  if (value === Number.NEGATIVE_INFINITY) return "-Inf";
  return Number.isNaN(value) ? "NaN" : String(value);
}

function histogramLines(name: string, { labels, times }: HistogramSeries): string[] {
  const lines: string[] = [];
  let cumulative = 0;
  DURATION_BOUNDS_S.forEach((bound, i) => {
    cumulative += times.buckets[i] ?? 0;
    lines.push(`${name}_bucket${labelText({ ...labels, le: String(bound) })} ${cumulative}`);
  });
  lines.push(`${name}_bucket${labelText({ ...labels, le: "+Inf" })} ${times.count}`);
  lines.push(`${name}_sum${labelText(labels)} ${number(times.sumMs / 1000)}`);
  lines.push(`${name}_count${labelText(labels)} ${times.count}`);
  return lines;
}

/** The families as exposition text: each declared metric's HELP and TYPE, then its samples. */
export function exposition(families: Families): string {
  const lines: string[] = [];
  for (const name of Object.keys(METRICS) as MetricName[]) {
    const found = families[name];
    if (!found) continue;
    const { type, help } = METRICS[name];
    lines.push(`# HELP ${name} ${help.replace(/\\/g, "\\\\").replace(/\n/g, "\\n")}`, `# TYPE ${name} ${type}`);
    if (type === "histogram") for (const series of found as HistogramSeries[]) lines.push(...histogramLines(name, series));
    else for (const s of found as Sample[]) lines.push(`${name}${labelText(s.labels)} ${number(s.value)}`);
  }
  return lines.join("\n") + "\n";
}
