import type { Backend } from "../setup";

/** GET /api/metrics as the tests read it: the answer's status, content type and text, and the text's samples. */

export type MetricSample = { name: string; labels: Record<string, string>; value: number };

export async function getMetrics(t: Backend, key: string | null) {
  const res = await t.fetch("/api/metrics", { headers: key === null ? {} : { authorization: `Bearer ${key}` } });
  return { status: res.status, contentType: res.headers.get("content-type"), text: await res.text() };
}

/** The samples of an exposition text (comments skipped). A line that does not parse throws. */
export function samplesOf(text: string): MetricSample[] {
  const samples: MetricSample[] = [];
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, k, v] of (m[3] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[k] = v.replace(/\\n/g, "\n").replace(/\\"/g, '"').replace(/\\\\/g, "\\");
    samples.push({ name: m[1], labels, value: m[4] === "+Inf" ? Number.POSITIVE_INFINITY : Number(m[4]) });
  }
  return samples;
}

/** The sum of the samples of this name whose labels include `match`. */
export function sumOf(samples: MetricSample[], name: string, match: Record<string, string> = {}): number {
  return samples.filter((s) => s.name === name && Object.entries(match).every(([k, v]) => s.labels[k] === v)).reduce((sum, s) => sum + s.value, 0);
}

/** Scrape the farm's metrics with an operator key: its samples (the answer must be 200). */
export async function scrapeSamples(t: Backend, key: string): Promise<MetricSample[]> {
  const answer = await getMetrics(t, key);
  if (answer.status !== 200) throw new Error(`GET /api/metrics answered ${answer.status}: ${answer.text}`);
  return samplesOf(answer.text);
}
