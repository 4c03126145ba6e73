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
import type * as cache from "../cache.js";
import type * as console from "../console.js";
import type * as consoleAccess from "../consoleAccess.js";
import type * as consoleActions from "../consoleActions.js";
import type * as consoleSchedules from "../consoleSchedules.js";
import type * as contract from "../contract.js";
import type * as crons from "../crons.js";
import type * as dependencies from "../dependencies.js";
import type * as dispatch from "../dispatch.js";
import type * as farm from "../farm.js";
import type * as http from "../http.js";
import type * as janitor from "../janitor.js";
import type * as jobs from "../jobs.js";
import type * as keyRevocations from "../keyRevocations.js";
import type * as lib_access from "../lib/access.js";
import type * as lib_appJobs from "../lib/appJobs.js";
import type * as lib_appLimits from "../lib/appLimits.js";
import type * as lib_apps from "../lib/apps.js";
import type * as lib_appsHttp from "../lib/appsHttp.js";
import type * as lib_appsWasm from "../lib/appsWasm.js";
import type * as lib_auth from "../lib/auth.js";
import type * as lib_backoff from "../lib/backoff.js";
import type * as lib_batchSeals from "../lib/batchSeals.js";
import type * as lib_bodies from "../lib/bodies.js";
import type * as lib_budget from "../lib/budget.js";
import type * as lib_cacheHits from "../lib/cacheHits.js";
import type * as lib_cacheWaiters from "../lib/cacheWaiters.js";
import type * as lib_cancel from "../lib/cancel.js";
import type * as lib_canonical from "../lib/canonical.js";
import type * as lib_checkpoints from "../lib/checkpoints.js";
import type * as lib_claim from "../lib/claim.js";
import type * as lib_claimWork from "../lib/claimWork.js";
import type * as lib_clientKeyLimits from "../lib/clientKeyLimits.js";
import type * as lib_counters from "../lib/counters.js";
import type * as lib_credit from "../lib/credit.js";
import type * as lib_creditSums from "../lib/creditSums.js";
import type * as lib_creditWeeks from "../lib/creditWeeks.js";
import type * as lib_cron from "../lib/cron.js";
import type * as lib_deadLetters from "../lib/deadLetters.js";
import type * as lib_declare from "../lib/declare.js";
import type * as lib_demand from "../lib/demand.js";
import type * as lib_dependencies from "../lib/dependencies.js";
import type * as lib_dependencyCycles from "../lib/dependencyCycles.js";
import type * as lib_dispatch from "../lib/dispatch.js";
import type * as lib_downloadBytes from "../lib/downloadBytes.js";
import type * as lib_energy from "../lib/energy.js";
import type * as lib_errors from "../lib/errors.js";
import type * as lib_events from "../lib/events.js";
import type * as lib_facts from "../lib/facts.js";
import type * as lib_fairLimits from "../lib/fairLimits.js";
import type * as lib_fairQueue from "../lib/fairQueue.js";
import type * as lib_fairRound from "../lib/fairRound.js";
import type * as lib_fairShare from "../lib/fairShare.js";
import type * as lib_faults from "../lib/faults.js";
import type * as lib_httpAnswers from "../lib/httpAnswers.js";
import type * as lib_idempotency from "../lib/idempotency.js";
import type * as lib_idempotencyHeader from "../lib/idempotencyHeader.js";
import type * as lib_inbox from "../lib/inbox.js";
import type * as lib_inputs from "../lib/inputs.js";
import type * as lib_instanceCredit from "../lib/instanceCredit.js";
import type * as lib_instanceDeadline from "../lib/instanceDeadline.js";
import type * as lib_instanceJudge from "../lib/instanceJudge.js";
import type * as lib_instanceProgress from "../lib/instanceProgress.js";
import type * as lib_instanceResults from "../lib/instanceResults.js";
import type * as lib_instanceView from "../lib/instanceView.js";
import type * as lib_instances from "../lib/instances.js";
import type * as lib_jobQuery from "../lib/jobQuery.js";
import type * as lib_jobView from "../lib/jobView.js";
import type * as lib_jobsHttp from "../lib/jobsHttp.js";
import type * as lib_keyCreators from "../lib/keyCreators.js";
import type * as lib_keyRunning from "../lib/keyRunning.js";
import type * as lib_keySummary from "../lib/keySummary.js";
import type * as lib_keys from "../lib/keys.js";
import type * as lib_kick from "../lib/kick.js";
import type * as lib_laneFor from "../lib/laneFor.js";
import type * as lib_laneLabel from "../lib/laneLabel.js";
import type * as lib_lanes from "../lib/lanes.js";
import type * as lib_lease from "../lib/lease.js";
import type * as lib_limits from "../lib/limits.js";
import type * as lib_metrics_declarations from "../lib/metrics/declarations.js";
import type * as lib_metrics_exposition from "../lib/metrics/exposition.js";
import type * as lib_metrics_fold from "../lib/metrics/fold.js";
import type * as lib_metrics_histogram from "../lib/metrics/histogram.js";
import type * as lib_metrics_labels from "../lib/metrics/labels.js";
import type * as lib_metrics_moves from "../lib/metrics/moves.js";
import type * as lib_metrics_overviewFigures from "../lib/metrics/overviewFigures.js";
import type * as lib_metrics_rows from "../lib/metrics/rows.js";
import type * as lib_metrics_scrape from "../lib/metrics/scrape.js";
import type * as lib_metrics_workerStates from "../lib/metrics/workerStates.js";
import type * as lib_parentRefs from "../lib/parentRefs.js";
import type * as lib_presence from "../lib/presence.js";
import type * as lib_queueWait from "../lib/queueWait.js";
import type * as lib_requirements from "../lib/requirements.js";
import type * as lib_resultCache from "../lib/resultCache.js";
import type * as lib_roster from "../lib/roster.js";
import type * as lib_routing from "../lib/routing.js";
import type * as lib_runTimes from "../lib/runTimes.js";
import type * as lib_scheduled from "../lib/scheduled.js";
import type * as lib_schedules from "../lib/schedules.js";
import type * as lib_settlements from "../lib/settlements.js";
import type * as lib_sha256 from "../lib/sha256.js";
import type * as lib_storable from "../lib/storable.js";
import type * as lib_submit from "../lib/submit.js";
import type * as lib_summary from "../lib/summary.js";
import type * as lib_traceparent from "../lib/traceparent.js";
import type * as lib_transitions from "../lib/transitions.js";
import type * as lib_validate from "../lib/validate.js";
import type * as lib_validation from "../lib/validation.js";
import type * as lib_validationApps from "../lib/validationApps.js";
import type * as lib_validationComplete from "../lib/validationComplete.js";
import type * as lib_validationTrust from "../lib/validationTrust.js";
import type * as lib_waitReasons from "../lib/waitReasons.js";
import type * as lib_wasmBinary from "../lib/wasmBinary.js";
import type * as lib_webhookAddress from "../lib/webhookAddress.js";
import type * as lib_webhookRateLimit from "../lib/webhookRateLimit.js";
import type * as lib_webhookSend from "../lib/webhookSend.js";
import type * as lib_webhooks from "../lib/webhooks.js";
import type * as lib_workerRows from "../lib/workerRows.js";
import type * as lib_workerSlots from "../lib/workerSlots.js";
import type * as metrics from "../metrics.js";
import type * as migrations from "../migrations.js";
import type * as retention from "../retention.js";
import type * as schedules from "../schedules.js";
import type * as summary from "../summary.js";
import type * as watchdog from "../watchdog.js";
import type * as webhookDelivery from "../webhookDelivery.js";
import type * as webhooks from "../webhooks.js";
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
  cache: typeof cache;
  console: typeof console;
  consoleAccess: typeof consoleAccess;
  consoleActions: typeof consoleActions;
  consoleSchedules: typeof consoleSchedules;
  contract: typeof contract;
  crons: typeof crons;
  dependencies: typeof dependencies;
  dispatch: typeof dispatch;
  farm: typeof farm;
  http: typeof http;
  janitor: typeof janitor;
  jobs: typeof jobs;
  keyRevocations: typeof keyRevocations;
  "lib/access": typeof lib_access;
  "lib/appJobs": typeof lib_appJobs;
  "lib/appLimits": typeof lib_appLimits;
  "lib/apps": typeof lib_apps;
  "lib/appsHttp": typeof lib_appsHttp;
  "lib/appsWasm": typeof lib_appsWasm;
  "lib/auth": typeof lib_auth;
  "lib/backoff": typeof lib_backoff;
  "lib/batchSeals": typeof lib_batchSeals;
  "lib/bodies": typeof lib_bodies;
  "lib/budget": typeof lib_budget;
  "lib/cacheHits": typeof lib_cacheHits;
  "lib/cacheWaiters": typeof lib_cacheWaiters;
  "lib/cancel": typeof lib_cancel;
  "lib/canonical": typeof lib_canonical;
  "lib/checkpoints": typeof lib_checkpoints;
  "lib/claim": typeof lib_claim;
  "lib/claimWork": typeof lib_claimWork;
  "lib/clientKeyLimits": typeof lib_clientKeyLimits;
  "lib/counters": typeof lib_counters;
  "lib/credit": typeof lib_credit;
  "lib/creditSums": typeof lib_creditSums;
  "lib/creditWeeks": typeof lib_creditWeeks;
  "lib/cron": typeof lib_cron;
  "lib/deadLetters": typeof lib_deadLetters;
  "lib/declare": typeof lib_declare;
  "lib/demand": typeof lib_demand;
  "lib/dependencies": typeof lib_dependencies;
  "lib/dependencyCycles": typeof lib_dependencyCycles;
  "lib/dispatch": typeof lib_dispatch;
  "lib/downloadBytes": typeof lib_downloadBytes;
  "lib/energy": typeof lib_energy;
  "lib/errors": typeof lib_errors;
  "lib/events": typeof lib_events;
  "lib/facts": typeof lib_facts;
  "lib/fairLimits": typeof lib_fairLimits;
  "lib/fairQueue": typeof lib_fairQueue;
  "lib/fairRound": typeof lib_fairRound;
  "lib/fairShare": typeof lib_fairShare;
  "lib/faults": typeof lib_faults;
  "lib/httpAnswers": typeof lib_httpAnswers;
  "lib/idempotency": typeof lib_idempotency;
  "lib/idempotencyHeader": typeof lib_idempotencyHeader;
  "lib/inbox": typeof lib_inbox;
  "lib/inputs": typeof lib_inputs;
  "lib/instanceCredit": typeof lib_instanceCredit;
  "lib/instanceDeadline": typeof lib_instanceDeadline;
  "lib/instanceJudge": typeof lib_instanceJudge;
  "lib/instanceProgress": typeof lib_instanceProgress;
  "lib/instanceResults": typeof lib_instanceResults;
  "lib/instanceView": typeof lib_instanceView;
  "lib/instances": typeof lib_instances;
  "lib/jobQuery": typeof lib_jobQuery;
  "lib/jobView": typeof lib_jobView;
  "lib/jobsHttp": typeof lib_jobsHttp;
  "lib/keyCreators": typeof lib_keyCreators;
  "lib/keyRunning": typeof lib_keyRunning;
  "lib/keySummary": typeof lib_keySummary;
  "lib/keys": typeof lib_keys;
  "lib/kick": typeof lib_kick;
  "lib/laneFor": typeof lib_laneFor;
  "lib/laneLabel": typeof lib_laneLabel;
  "lib/lanes": typeof lib_lanes;
  "lib/lease": typeof lib_lease;
  "lib/limits": typeof lib_limits;
  "lib/metrics/declarations": typeof lib_metrics_declarations;
  "lib/metrics/exposition": typeof lib_metrics_exposition;
  "lib/metrics/fold": typeof lib_metrics_fold;
  "lib/metrics/histogram": typeof lib_metrics_histogram;
  "lib/metrics/labels": typeof lib_metrics_labels;
  "lib/metrics/moves": typeof lib_metrics_moves;
  "lib/metrics/overviewFigures": typeof lib_metrics_overviewFigures;
  "lib/metrics/rows": typeof lib_metrics_rows;
  "lib/metrics/scrape": typeof lib_metrics_scrape;
  "lib/metrics/workerStates": typeof lib_metrics_workerStates;
  "lib/parentRefs": typeof lib_parentRefs;
  "lib/presence": typeof lib_presence;
  "lib/queueWait": typeof lib_queueWait;
  "lib/requirements": typeof lib_requirements;
  "lib/resultCache": typeof lib_resultCache;
  "lib/roster": typeof lib_roster;
  "lib/routing": typeof lib_routing;
  "lib/runTimes": typeof lib_runTimes;
  "lib/scheduled": typeof lib_scheduled;
  "lib/schedules": typeof lib_schedules;
  "lib/settlements": typeof lib_settlements;
  "lib/sha256": typeof lib_sha256;
  "lib/storable": typeof lib_storable;
  "lib/submit": typeof lib_submit;
  "lib/summary": typeof lib_summary;
  "lib/traceparent": typeof lib_traceparent;
  "lib/transitions": typeof lib_transitions;
  "lib/validate": typeof lib_validate;
  "lib/validation": typeof lib_validation;
  "lib/validationApps": typeof lib_validationApps;
  "lib/validationComplete": typeof lib_validationComplete;
  "lib/validationTrust": typeof lib_validationTrust;
  "lib/waitReasons": typeof lib_waitReasons;
  "lib/wasmBinary": typeof lib_wasmBinary;
  "lib/webhookAddress": typeof lib_webhookAddress;
  "lib/webhookRateLimit": typeof lib_webhookRateLimit;
  "lib/webhookSend": typeof lib_webhookSend;
  "lib/webhooks": typeof lib_webhooks;
  "lib/workerRows": typeof lib_workerRows;
  "lib/workerSlots": typeof lib_workerSlots;
  metrics: typeof metrics;
  migrations: typeof migrations;
  retention: typeof retention;
  schedules: typeof schedules;
  summary: typeof summary;
  watchdog: typeof watchdog;
  webhookDelivery: typeof webhookDelivery;
  webhooks: typeof webhooks;
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
