/**
 * Farm apps' documented limits (docs/API.md), shared by the server (publishing) and the worker (running):
 * a pure module, so the extension may import it like convex/core/limits.ts.
 */
export const APP_LIMITS = {
  /** Names of apps: job types are `app.<name>`. */
  namePattern: /^[a-z0-9][a-z0-9-]{0,63}$/,
  moduleBytesMax: 20 * 1024 * 1024,
  memoryMBMin: 1,
  memoryMBMax: 2048,
  memoryMBDefault: 256,
  timeoutMsMin: 1,
  timeoutMsMax: 24 * 60 * 60 * 1000,
  timeoutMsDefault: 10 * 60 * 1000,
  /** A checkpoint, decoded. */
  checkpointBytesMax: 512 * 1024,
  /** Versions apps:list returns per org. */
  versionsListed: 500,
} as const;

/** The capability a worker offers (and its enrollment must allow) to run apps; every app job requires it. */
export const APPS_CAPABILITY = "apps";

/** Job types that run an app: `app.<name>`. */
export const APP_TYPE_PREFIX = "app.";

export const SHA256_HEX = /^[0-9a-f]{64}$/;
