/**
 * Words for a lane and what a job needs of its machine (pure: the console and the Farm view use them too, so a
 * lane reads the same everywhere): "demo.echo · ≥ 64 GB memory", "app.mandelbrot v3 · ≥ 128 MB memory, ≥ 4 cores".
 */
import { APP_TYPE_PREFIX, APPS_CAPABILITY } from "../core/appLimits";

type Needs = { memoryMB?: number; cores?: number; gpu?: { vendor?: string; vramMB?: number } };

/** 65536 → "64 GB", 1536 → "1.5 GB", 128 → "128 MB". */
export function formatMB(mb: number): string {
  if (mb < 1024) return `${mb} MB`;
  const gb = mb / 1024;
  return `${Number.isInteger(gb) ? gb : gb.toFixed(1)} GB`;
}

/** A requirement class in words: "≥ 64 GB memory, ≥ 4 cores, a nvidia GPU ≥ 16 GB"; "" for none. */
export function needsText(needs: Needs | undefined): string {
  if (!needs) return "";
  const parts: string[] = [];
  if (needs.memoryMB !== undefined) parts.push(`≥ ${formatMB(needs.memoryMB)} memory`);
  if (needs.cores !== undefined) parts.push(`≥ ${needs.cores} cores`);
  if (needs.gpu) parts.push(`a ${needs.gpu.vendor ? `${needs.gpu.vendor} ` : ""}GPU${needs.gpu.vramMB !== undefined ? ` ≥ ${formatMB(needs.gpu.vramMB)}` : ""}`);
  return parts.join(", ");
}

type LaneApps = { apps?: ReadonlyArray<{ name: string; version: number }>; moreApps?: boolean };

/** The apps an `apps` lane holds jobs of: "app.mandelbrot v3, app.julia v1 and more"; null when it names none. */
export function laneAppsText(lane: LaneApps): string | null {
  if (!lane.apps || lane.apps.length === 0) return null;
  const named = lane.apps.map((a) => `${APP_TYPE_PREFIX}${a.name} v${a.version}`).join(", ");
  return lane.moreApps ? `${named} and more` : named;
}

/**
 * A lane's label: its capabilities (an `apps` lane's apps in their place when it names them), then its class of
 * machine when it has one.
 */
export function laneLabel(lane: { capabilities: readonly string[]; requirements?: Needs } & LaneApps): string {
  const apps = laneAppsText(lane);
  const named = lane.capabilities.map((c) => (c === APPS_CAPABILITY && apps !== null ? apps : c));
  const caps = named.length > 0 ? named.join(" + ") : "any worker";
  const needs = needsText(lane.requirements);
  return needs ? `${caps} · ${needs}` : caps;
}
