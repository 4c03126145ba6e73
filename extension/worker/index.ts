export { Worker, MAX_CONCURRENCY } from "./worker";
export type { ByteAllowance, WorkerEvents, WorkerOptions, WorkerSnapshot, WorkerState, WorkerStatus, RunningJobView } from "./worker";
export type { StopReason } from "./stopReason";
export type { JobOutcome } from "./jobRun";
export { convexFarmClient } from "./farmClient";
export type { FarmClient, ClaimedJob, DoorbellValue, HeartbeatResult, Slots } from "./farmClient";
export type { Handler, HandlerContext, HandlerSource } from "./handler";
export type { AppLabel } from "./jobLabel";
