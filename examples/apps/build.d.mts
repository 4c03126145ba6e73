/** Types of build.mjs for the tests and benchmarks that build the example apps. */
export declare const BUILD_DIR: string;
/** Build (or reuse when up to date) every example app; returns each app's .wasm path by name. */
export declare function buildApps(options?: { force?: boolean; log?: (line: string) => void }): Record<string, string>;
