/**
 * How the suite reports to its runner. test/harness/run-host-tests.mjs (code-server) sets FARMHAND_HOST_TAG_LOGS=1
 * and reads these prefixed log lines; test/harness/run-desktop-tests.mjs sets FARMHAND_HOST_RESULT_FILE instead.
 */
export const RESULT_PREFIX = "FARMHAND_HOST_RESULT ";
/** Prefix of every line mocha's reporter prints inside the host. */
export const REPORTER_PREFIX = "FARMHAND_HOST_MOCHA ";

export type HostTestResult = { title: string; passed: boolean; ms: number; error?: string };
export type HostSuiteResult = { passed: number; failed: number; tests: HostTestResult[] };
