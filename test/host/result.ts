/** The host suite's closing log line, read by test/harness/run-host-tests.mjs (and its desktop twin). */
export const RESULT_PREFIX = "FARMHAND_HOST_RESULT ";
/** Prefix of every line mocha's reporter prints inside the host. */
export const REPORTER_PREFIX = "FARMHAND_HOST_MOCHA ";

export type HostTestResult = { title: string; passed: boolean; ms: number; error?: string };
export type HostSuiteResult = { passed: number; failed: number; tests: HostTestResult[] };
