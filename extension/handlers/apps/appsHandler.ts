import { APPS_CAPABILITY, LIMITS } from "../../../convex/contract";
import { collectInputs } from "../withInputs";
import { HandlerError } from "../../worker/errors";
import type { Handler } from "../../worker/handler";
import type { AppRunner } from "./appRunner";

/**
 * The one handler every app job (`app.<name>`) runs through: the engine hands it the job's pinned version and
 * checkpoint in the context; checkpoints the app prints go back through `saveCheckpoint`. Registered only when
 * the donor allowed apps, so only then does the worker offer the `apps` capability.
 */
export function appsHandler(runner: Pick<AppRunner, "run">): Handler {
  return {
    type: APPS_CAPABILITY,
    capabilities: () => [APPS_CAPABILITY],
    run: async (payload, ctx) => {
      if (!ctx.app) throw new HandlerError("this job names no app version to run (only app.<name> jobs run as apps)", { retryable: false });
      // a job submitted with dependsOn gets its parents' results on stdin as `inputs` (inputs_too_large past the cap)
      const inputs = await collectInputs(ctx.inputs?.bind(ctx), LIMITS.appInputsBytes);
      const outcome = await runner.run(
        { app: ctx.app, payload, ...(ctx.checkpoint !== undefined ? { checkpoint: ctx.checkpoint } : {}), ...(inputs.length > 0 ? { inputs } : {}) },
        { ...ctx, onCheckpoint: ctx.saveCheckpoint },
      );
      return outcome.result;
    },
  };
}
