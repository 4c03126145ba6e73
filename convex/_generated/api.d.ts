/* eslint-disable */
/**
 * Generated `api` utility.
 *
 * THIS CODE IS AUTOMATICALLY GENERATED.
 *
 * To regenerate, run `npx convex dev`.
 * @module
 */

import type {
  ApiFromModules,
  FilterApi,
  FunctionReference,
} from "convex/server";
import type * as admin from "../admin.js";
import type * as apps from "../apps.js";
import type * as crons from "../crons.js";
import type * as farm from "../farm.js";
import type * as http from "../http.js";
import type * as janitor from "../janitor.js";
import type * as jobs from "../jobs.js";
import type * as lib_appLimits from "../lib/appLimits.js";
import type * as lib_apps from "../lib/apps.js";
import type * as lib_appsHttp from "../lib/appsHttp.js";
import type * as lib_appsWasm from "../lib/appsWasm.js";
import type * as lib_auth from "../lib/auth.js";
import type * as lib_cancel from "../lib/cancel.js";
import type * as lib_claim from "../lib/claim.js";
import type * as lib_counters from "../lib/counters.js";
import type * as lib_deadLetters from "../lib/deadLetters.js";
import type * as lib_errors from "../lib/errors.js";
import type * as lib_events from "../lib/events.js";
import type * as lib_jobView from "../lib/jobView.js";
import type * as lib_keys from "../lib/keys.js";
import type * as lib_lanes from "../lib/lanes.js";
import type * as lib_lease from "../lib/lease.js";
import type * as lib_limits from "../lib/limits.js";
import type * as lib_storable from "../lib/storable.js";
import type * as lib_submit from "../lib/submit.js";
import type * as lib_transitions from "../lib/transitions.js";
import type * as lib_validate from "../lib/validate.js";
import type * as retention from "../retention.js";
import type * as workers from "../workers.js";

/**
 * A utility for referencing Convex functions in your app's API.
 *
 * Usage:
 * ```js
 * const myFunctionReference = api.myModule.myFunction;
 * ```
 */
declare const fullApi: ApiFromModules<{
  admin: typeof admin;
  apps: typeof apps;
  crons: typeof crons;
  farm: typeof farm;
  http: typeof http;
  janitor: typeof janitor;
  jobs: typeof jobs;
  "lib/appLimits": typeof lib_appLimits;
  "lib/apps": typeof lib_apps;
  "lib/appsHttp": typeof lib_appsHttp;
  "lib/appsWasm": typeof lib_appsWasm;
  "lib/auth": typeof lib_auth;
  "lib/cancel": typeof lib_cancel;
  "lib/claim": typeof lib_claim;
  "lib/counters": typeof lib_counters;
  "lib/deadLetters": typeof lib_deadLetters;
  "lib/errors": typeof lib_errors;
  "lib/events": typeof lib_events;
  "lib/jobView": typeof lib_jobView;
  "lib/keys": typeof lib_keys;
  "lib/lanes": typeof lib_lanes;
  "lib/lease": typeof lib_lease;
  "lib/limits": typeof lib_limits;
  "lib/storable": typeof lib_storable;
  "lib/submit": typeof lib_submit;
  "lib/transitions": typeof lib_transitions;
  "lib/validate": typeof lib_validate;
  retention: typeof retention;
  workers: typeof workers;
}>;
export declare const api: FilterApi<
  typeof fullApi,
  FunctionReference<any, "public">
>;
export declare const internal: FilterApi<
  typeof fullApi,
  FunctionReference<any, "internal">
>;
