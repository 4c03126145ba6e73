/**
 * The environment a job's processes get: an allow-list of what programs need to run (where programs are, the
 * home and temporary folders, language and time zone), never the rest of the donor's environment. Whatever
 * else is set where Farmhand runs — its own keys (FARMHAND_*), the editor's variables (VSCODE_*, ELECTRON_*),
 * NODE_OPTIONS, a shell's GITHUB_TOKEN or cloud credentials — stays out of reach of job code. Farmhand sets one name
 * per job itself: TRACEPARENT, the run's W3C trace context (never taken from the donor's environment).
 */

/** Names passed on as they are (POSIX names; on Windows they are matched without regard to case). */
export const JOB_ENV_NAMES = ["PATH", "HOME", "LANG", "TZ", "TMPDIR"] as const;
/** Windows' equivalents, and what its programs cannot start without. */
const JOB_ENV_WINDOWS_NAMES = ["SystemRoot", "SystemDrive", "windir", "TEMP", "TMP", "USERPROFILE", "PATHEXT", "COMSPEC"] as const;
/** Locale settings: LC_ALL, LC_CTYPE, … */
const LOCALE = /^LC_[A-Z]+$/;

/**
 * The allow-listed part of `source`, plus `extra` (a recipe's own `env`, which the donor wrote) on top, plus what
 * Farmhand sets for this job (`job.traceparent` as TRACEPARENT, when the run has one). Nothing of `source` outside
 * the allow-list survives, whatever its name.
 */
export function jobEnvironment(
  extra: Record<string, string> = {},
  source: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
  job: { traceparent?: string } = {},
): Record<string, string> {
  const windows = platform === "win32";
  const allowed = new Set<string>([...JOB_ENV_NAMES, ...(windows ? JOB_ENV_WINDOWS_NAMES : [])].map((n) => (windows ? n.toUpperCase() : n)));
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(source)) {
    if (value === undefined) continue;
    const key = windows ? name.toUpperCase() : name;
    if (allowed.has(key) || LOCALE.test(key)) env[name] = value;
  }
  return { ...env, ...extra, ...(job.traceparent !== undefined ? { TRACEPARENT: job.traceparent } : {}) };
}

/**
 * The environment of the handler runner process itself: the job environment, and under Electron (VS Code's
 * extension host, whose process.execPath is the editor) ELECTRON_RUN_AS_NODE=1, without which the editor's
 * executable would start a window rather than run the script. The runner builds its jobs' environment from its own with `jobEnvironment`, which drops it.
 */
export function runnerEnvironment(
  source: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
  electron = process.versions.electron !== undefined,
): Record<string, string> {
  const env = jobEnvironment({}, source, platform);
  if (electron || source.ELECTRON_RUN_AS_NODE) env.ELECTRON_RUN_AS_NODE = "1";
  return env;
}
