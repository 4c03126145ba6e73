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
import type * as access_access from "../access/access.js";
import type * as access_auth from "../access/auth.js";
import type * as access_keyCreators from "../access/keyCreators.js";
import type * as access_keys from "../access/keys.js";
import type * as admin from "../admin.js";
import type * as apps from "../apps.js";
import type * as apps_appJobs from "../apps/appJobs.js";
import type * as apps_appLimits from "../apps/appLimits.js";
import type * as apps_apps from "../apps/apps.js";
import type * as apps_appsHttp from "../apps/appsHttp.js";
import type * as apps_appsWasm from "../apps/appsWasm.js";
import type * as apps_wasmBinary from "../apps/wasmBinary.js";
import type * as cache from "../cache.js";
import type * as console from "../console.js";
import type * as consoleAccess from "../consoleAccess.js";
import type * as consoleActions from "../consoleActions.js";
import type * as consoleSchedules from "../consoleSchedules.js";
import type * as contract from "../contract.js";
import type * as core_backoff from "../core/backoff.js";
import type * as core_bodies from "../core/bodies.js";
import type * as core_budget from "../core/budget.js";
import type * as core_canonical from "../core/canonical.js";
import type * as core_errors from "../core/errors.js";
import type * as core_faults from "../core/faults.js";
import type * as core_httpAnswers from "../core/httpAnswers.js";
import type * as core_limits from "../core/limits.js";
import type * as core_sha256 from "../core/sha256.js";
import type * as core_storable from "../core/storable.js";
import type * as core_validate from "../core/validate.js";
import type * as crons from "../crons.js";
import type * as dependencies from "../dependencies.js";
import type * as dispatch from "../dispatch.js";
import type * as farm from "../farm.js";
import type * as http from "../http.js";
import type * as janitor from "../janitor.js";
import type * as jobs from "../jobs.js";
import type * as keyRevocations from "../keyRevocations.js";
import type * as metrics from "../metrics.js";
import type * as migrations from "../migrations.js";
import type * as observability_declarations from "../observability/declarations.js";
import type * as observability_exposition from "../observability/exposition.js";
import type * as observability_fold from "../observability/fold.js";
import type * as observability_histogram from "../observability/histogram.js";
import type * as observability_keySummary from "../observability/keySummary.js";
import type * as observability_labels from "../observability/labels.js";
import type * as observability_moves from "../observability/moves.js";
import type * as observability_overviewFigures from "../observability/overviewFigures.js";
import type * as observability_queueWait from "../observability/queueWait.js";
import type * as observability_rows from "../observability/rows.js";
import type * as observability_runTimes from "../observability/runTimes.js";
import type * as observability_scrape from "../observability/scrape.js";
import type * as observability_traceparent from "../observability/traceparent.js";
import type * as observability_workerStates from "../observability/workerStates.js";
import type * as pipelines_batchSeals from "../pipelines/batchSeals.js";
import type * as pipelines_cron from "../pipelines/cron.js";
import type * as pipelines_dependencies from "../pipelines/dependencies.js";
import type * as pipelines_dependencyCycles from "../pipelines/dependencyCycles.js";
import type * as pipelines_inputs from "../pipelines/inputs.js";
import type * as pipelines_parentRefs from "../pipelines/parentRefs.js";
import type * as pipelines_schedules from "../pipelines/schedules.js";
import type * as pipelines_settlements from "../pipelines/settlements.js";
import type * as queue_cacheHits from "../queue/cacheHits.js";
import type * as queue_cacheWaiters from "../queue/cacheWaiters.js";
import type * as queue_cancel from "../queue/cancel.js";
import type * as queue_checkpoints from "../queue/checkpoints.js";
import type * as queue_claim from "../queue/claim.js";
import type * as queue_claimWork from "../queue/claimWork.js";
import type * as queue_clientKeyLimits from "../queue/clientKeyLimits.js";
import type * as queue_counters from "../queue/counters.js";
import type * as queue_deadLetters from "../queue/deadLetters.js";
import type * as queue_declare from "../queue/declare.js";
import type * as queue_demand from "../queue/demand.js";
import type * as queue_dispatch from "../queue/dispatch.js";
import type * as queue_downloadBytes from "../queue/downloadBytes.js";
import type * as queue_events from "../queue/events.js";
import type * as queue_facts from "../queue/facts.js";
import type * as queue_fairLimits from "../queue/fairLimits.js";
import type * as queue_fairQueue from "../queue/fairQueue.js";
import type * as queue_fairRound from "../queue/fairRound.js";
import type * as queue_fairShare from "../queue/fairShare.js";
import type * as queue_idempotency from "../queue/idempotency.js";
import type * as queue_idempotencyHeader from "../queue/idempotencyHeader.js";
import type * as queue_inbox from "../queue/inbox.js";
import type * as queue_jobQuery from "../queue/jobQuery.js";
import type * as queue_jobView from "../queue/jobView.js";
import type * as queue_jobsHttp from "../queue/jobsHttp.js";
import type * as queue_keyRunning from "../queue/keyRunning.js";
import type * as queue_kick from "../queue/kick.js";
import type * as queue_laneApps from "../queue/laneApps.js";
import type * as queue_laneFor from "../queue/laneFor.js";
import type * as queue_laneLabel from "../queue/laneLabel.js";
import type * as queue_lanes from "../queue/lanes.js";
import type * as queue_lease from "../queue/lease.js";
import type * as queue_paceText from "../queue/paceText.js";
import type * as queue_presence from "../queue/presence.js";
import type * as queue_requirements from "../queue/requirements.js";
import type * as queue_resultCache from "../queue/resultCache.js";
import type * as queue_roster from "../queue/roster.js";
import type * as queue_routing from "../queue/routing.js";
import type * as queue_scheduled from "../queue/scheduled.js";
import type * as queue_submit from "../queue/submit.js";
import type * as queue_summary from "../queue/summary.js";
import type * as queue_transitions from "../queue/transitions.js";
import type * as queue_waitReasons from "../queue/waitReasons.js";
import type * as queue_workerRows from "../queue/workerRows.js";
import type * as queue_workerSlots from "../queue/workerSlots.js";
import type * as retention from "../retention.js";
import type * as schedules from "../schedules.js";
import type * as summary from "../summary.js";
import type * as trust_credit from "../trust/credit.js";
import type * as trust_creditSums from "../trust/creditSums.js";
import type * as trust_creditWeeks from "../trust/creditWeeks.js";
import type * as trust_energy from "../trust/energy.js";
import type * as trust_instanceCredit from "../trust/instanceCredit.js";
import type * as trust_instanceDeadline from "../trust/instanceDeadline.js";
import type * as trust_instanceJudge from "../trust/instanceJudge.js";
import type * as trust_instanceProgress from "../trust/instanceProgress.js";
import type * as trust_instanceResults from "../trust/instanceResults.js";
import type * as trust_instanceView from "../trust/instanceView.js";
import type * as trust_instances from "../trust/instances.js";
import type * as trust_validation from "../trust/validation.js";
import type * as trust_validationApps from "../trust/validationApps.js";
import type * as trust_validationComplete from "../trust/validationComplete.js";
import type * as trust_validationTrust from "../trust/validationTrust.js";
import type * as watchdog from "../watchdog.js";
import type * as webhookDelivery from "../webhookDelivery.js";
import type * as webhooks from "../webhooks.js";
import type * as webhooks_webhookAddress from "../webhooks/webhookAddress.js";
import type * as webhooks_webhookRateLimit from "../webhooks/webhookRateLimit.js";
import type * as webhooks_webhookSend from "../webhooks/webhookSend.js";
import type * as webhooks_webhooks from "../webhooks/webhooks.js";
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
  "access/access": typeof access_access;
  "access/auth": typeof access_auth;
  "access/keyCreators": typeof access_keyCreators;
  "access/keys": typeof access_keys;
  admin: typeof admin;
  apps: typeof apps;
  "apps/appJobs": typeof apps_appJobs;
  "apps/appLimits": typeof apps_appLimits;
  "apps/apps": typeof apps_apps;
  "apps/appsHttp": typeof apps_appsHttp;
  "apps/appsWasm": typeof apps_appsWasm;
  "apps/wasmBinary": typeof apps_wasmBinary;
  cache: typeof cache;
  console: typeof console;
  consoleAccess: typeof consoleAccess;
  consoleActions: typeof consoleActions;
  consoleSchedules: typeof consoleSchedules;
  contract: typeof contract;
  "core/backoff": typeof core_backoff;
  "core/bodies": typeof core_bodies;
  "core/budget": typeof core_budget;
  "core/canonical": typeof core_canonical;
  "core/errors": typeof core_errors;
  "core/faults": typeof core_faults;
  "core/httpAnswers": typeof core_httpAnswers;
  "core/limits": typeof core_limits;
  "core/sha256": typeof core_sha256;
  "core/storable": typeof core_storable;
  "core/validate": typeof core_validate;
  crons: typeof crons;
  dependencies: typeof dependencies;
  dispatch: typeof dispatch;
  farm: typeof farm;
  http: typeof http;
  janitor: typeof janitor;
  jobs: typeof jobs;
  keyRevocations: typeof keyRevocations;
  metrics: typeof metrics;
  migrations: typeof migrations;
  "observability/declarations": typeof observability_declarations;
  "observability/exposition": typeof observability_exposition;
  "observability/fold": typeof observability_fold;
  "observability/histogram": typeof observability_histogram;
  "observability/keySummary": typeof observability_keySummary;
  "observability/labels": typeof observability_labels;
  "observability/moves": typeof observability_moves;
  "observability/overviewFigures": typeof observability_overviewFigures;
  "observability/queueWait": typeof observability_queueWait;
  "observability/rows": typeof observability_rows;
  "observability/runTimes": typeof observability_runTimes;
  "observability/scrape": typeof observability_scrape;
  "observability/traceparent": typeof observability_traceparent;
  "observability/workerStates": typeof observability_workerStates;
  "pipelines/batchSeals": typeof pipelines_batchSeals;
  "pipelines/cron": typeof pipelines_cron;
  "pipelines/dependencies": typeof pipelines_dependencies;
  "pipelines/dependencyCycles": typeof pipelines_dependencyCycles;
  "pipelines/inputs": typeof pipelines_inputs;
  "pipelines/parentRefs": typeof pipelines_parentRefs;
  "pipelines/schedules": typeof pipelines_schedules;
  "pipelines/settlements": typeof pipelines_settlements;
  "queue/cacheHits": typeof queue_cacheHits;
  "queue/cacheWaiters": typeof queue_cacheWaiters;
  "queue/cancel": typeof queue_cancel;
  "queue/checkpoints": typeof queue_checkpoints;
  "queue/claim": typeof queue_claim;
  "queue/claimWork": typeof queue_claimWork;
  "queue/clientKeyLimits": typeof queue_clientKeyLimits;
  "queue/counters": typeof queue_counters;
  "queue/deadLetters": typeof queue_deadLetters;
  "queue/declare": typeof queue_declare;
  "queue/demand": typeof queue_demand;
  "queue/dispatch": typeof queue_dispatch;
  "queue/downloadBytes": typeof queue_downloadBytes;
  "queue/events": typeof queue_events;
  "queue/facts": typeof queue_facts;
  "queue/fairLimits": typeof queue_fairLimits;
  "queue/fairQueue": typeof queue_fairQueue;
  "queue/fairRound": typeof queue_fairRound;
  "queue/fairShare": typeof queue_fairShare;
  "queue/idempotency": typeof queue_idempotency;
  "queue/idempotencyHeader": typeof queue_idempotencyHeader;
  "queue/inbox": typeof queue_inbox;
  "queue/jobQuery": typeof queue_jobQuery;
  "queue/jobView": typeof queue_jobView;
  "queue/jobsHttp": typeof queue_jobsHttp;
  "queue/keyRunning": typeof queue_keyRunning;
  "queue/kick": typeof queue_kick;
  "queue/laneApps": typeof queue_laneApps;
  "queue/laneFor": typeof queue_laneFor;
  "queue/laneLabel": typeof queue_laneLabel;
  "queue/lanes": typeof queue_lanes;
  "queue/lease": typeof queue_lease;
  "queue/paceText": typeof queue_paceText;
  "queue/presence": typeof queue_presence;
  "queue/requirements": typeof queue_requirements;
  "queue/resultCache": typeof queue_resultCache;
  "queue/roster": typeof queue_roster;
  "queue/routing": typeof queue_routing;
  "queue/scheduled": typeof queue_scheduled;
  "queue/submit": typeof queue_submit;
  "queue/summary": typeof queue_summary;
  "queue/transitions": typeof queue_transitions;
  "queue/waitReasons": typeof queue_waitReasons;
  "queue/workerRows": typeof queue_workerRows;
  "queue/workerSlots": typeof queue_workerSlots;
  retention: typeof retention;
  schedules: typeof schedules;
  summary: typeof summary;
  "trust/credit": typeof trust_credit;
  "trust/creditSums": typeof trust_creditSums;
  "trust/creditWeeks": typeof trust_creditWeeks;
  "trust/energy": typeof trust_energy;
  "trust/instanceCredit": typeof trust_instanceCredit;
  "trust/instanceDeadline": typeof trust_instanceDeadline;
  "trust/instanceJudge": typeof trust_instanceJudge;
  "trust/instanceProgress": typeof trust_instanceProgress;
  "trust/instanceResults": typeof trust_instanceResults;
  "trust/instanceView": typeof trust_instanceView;
  "trust/instances": typeof trust_instances;
  "trust/validation": typeof trust_validation;
  "trust/validationApps": typeof trust_validationApps;
  "trust/validationComplete": typeof trust_validationComplete;
  "trust/validationTrust": typeof trust_validationTrust;
  watchdog: typeof watchdog;
  webhookDelivery: typeof webhookDelivery;
  webhooks: typeof webhooks;
  "webhooks/webhookAddress": typeof webhooks_webhookAddress;
  "webhooks/webhookRateLimit": typeof webhooks_webhookRateLimit;
  "webhooks/webhookSend": typeof webhooks_webhookSend;
  "webhooks/webhooks": typeof webhooks_webhooks;
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
