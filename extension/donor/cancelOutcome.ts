import type { FunctionReturnType } from "convex/server";
import type { api } from "../../convex/_generated/api";

export type CancelAnswer = FunctionReturnType<typeof api.consoleActions.cancelJob>;

/** What `consoleActions:cancelJob` did, in the words `farmhand.cancelJob` reports it. */
export function cancelOutcome(answer: CancelAnswer): string {
  if (answer.status === "canceled") return "the job is canceled";
  if (answer.status === "running") return "cancel requested: the job is running and stops at its worker's next check-in";
  return `nothing to cancel: the job had already finished (${answer.status})`;
}
