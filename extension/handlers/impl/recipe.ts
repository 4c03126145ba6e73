import { spawn } from "node:child_process";
import { abortReason, HandlerError } from "../../worker/errors";
import { jobEnvironment } from "../jobEnv";
import type { ImplContext } from "../protocol";
import { classifyLine, LineReader, parseJsonLine } from "../stdoutProtocol";

/** A named command the machine's owner declared (never taken from a job). */
export type Recipe = {
  name: string;
  command: string;
  args?: string[];
  cwd?: string;
  env?: Record<string, string>;
  timeoutMs?: number;
  description?: string;
};

const STDERR_TAIL = 2_000;

/**
 * Run a recipe: the job's payload goes in on stdin as JSON; stdout follows the line protocol (../stdoutProtocol.ts):
 * progress lines report progress, text lines are streamed as output, the last line must be JSON and is the result
 * (other JSON lines before it are not streamed, and a recipe has no checkpoints).
 */
export function runRecipe(payload: unknown, ctx: ImplContext, options: unknown): Promise<unknown> {
  const recipe = options as Recipe;
  const label = `recipe "${recipe.name}"`;
  return new Promise((resolve, reject) => {
    const child = spawn(recipe.command, recipe.args ?? [], {
      cwd: recipe.cwd,
      // Only the allow-list of jobEnv.ts, the recipe's own env and the run's trace context: never the donor's keys or
      // the editor's variables.
      env: jobEnvironment(recipe.env, process.env, process.platform, { traceparent: ctx.traceparent }),
      stdio: ["pipe", "pipe", "pipe"],
    });
    let lastLine = "";
    let stderr = "";
    const onAbort = () => child.kill("SIGTERM");
    ctx.signal.addEventListener("abort", onAbort);

    const stdout = new LineReader((line) => {
      lastLine = line;
      const seen = classifyLine(line);
      if (seen.kind === "progress") ctx.progress(seen.progress, seen.status);
      else if (seen.kind === "text") ctx.output(line + "\n");
    });
    child.stdout.on("data", (chunk: Buffer) => stdout.write(chunk));
    child.stderr.setEncoding("utf8").on("data", (text: string) => {
      stderr = (stderr + text).slice(-STDERR_TAIL);
    });
    child.stdin.on("error", () => undefined); // a recipe may exit without reading its input
    child.stdin.end(JSON.stringify(payload ?? null));

    child.on("error", (e) => {
      ctx.signal.removeEventListener("abort", onAbort);
      reject(new HandlerError(`${label} could not start \`${recipe.command}\`: ${e.message}`, { retryable: false }));
    });
    child.on("close", (code, signal) => {
      ctx.signal.removeEventListener("abort", onAbort);
      stdout.end();
      if (ctx.signal.aborted) return reject(abortReason(ctx.signal));
      const tail = stderr.trim() ? `: ${stderr.trim().split("\n").slice(-5).join(" | ")}` : "";
      if (code !== 0) {
        return reject(new HandlerError(`${label} exited with ${signal ? `signal ${signal}` : `code ${code}`}${tail}`));
      }
      const result = parseJsonLine(lastLine);
      if (result === undefined) {
        const got = lastLine ? `"${lastLine.slice(0, 200)}"` : "nothing";
        return reject(new HandlerError(`${label} must print its result as JSON on its last line of output; it printed ${got}`, { retryable: false }));
      }
      resolve(result);
    });
  });
}
