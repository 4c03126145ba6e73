import { spawn } from "node:child_process";
import { abortReason, HandlerError } from "../../worker/errors";
import type { ImplContext } from "../protocol";

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
 * Run a recipe: the job's payload goes in on stdin as JSON; JSON lines like {"progress":0.5,"status":"..."}
 * report progress; other lines are streamed as output; the last line must be JSON and is the result.
 */
export function runRecipe(payload: unknown, ctx: ImplContext, options: unknown): Promise<unknown> {
  const recipe = options as Recipe;
  const label = `recipe "${recipe.name}"`;
  return new Promise((resolve, reject) => {
    const child = spawn(recipe.command, recipe.args ?? [], {
      cwd: recipe.cwd,
      env: { ...process.env, ...recipe.env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdoutRest = "";
    let lastLine = "";
    let stderr = "";
    const onAbort = () => child.kill("SIGTERM");
    ctx.signal.addEventListener("abort", onAbort);

    const onLine = (line: string) => {
      if (!line.trim()) return;
      lastLine = line;
      const json = parseJson(line);
      if (isProgressLine(json)) ctx.progress(json.progress, json.status);
      else if (json === undefined) ctx.output(line + "\n");
    };
    child.stdout.setEncoding("utf8").on("data", (text: string) => {
      stdoutRest += text;
      let nl: number;
      while ((nl = stdoutRest.indexOf("\n")) >= 0) {
        onLine(stdoutRest.slice(0, nl).replace(/\r$/, ""));
        stdoutRest = stdoutRest.slice(nl + 1);
      }
    });
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
      if (stdoutRest) onLine(stdoutRest);
      if (ctx.signal.aborted) return reject(abortReason(ctx.signal));
      const tail = stderr.trim() ? `: ${stderr.trim().split("\n").slice(-5).join(" | ")}` : "";
      if (code !== 0) {
        return reject(new HandlerError(`${label} exited with ${signal ? `signal ${signal}` : `code ${code}`}${tail}`));
      }
      const result = parseJson(lastLine);
      if (result === undefined) {
        const got = lastLine ? `"${lastLine.slice(0, 200)}"` : "nothing";
        return reject(new HandlerError(`${label} must print its result as JSON on its last line of output; it printed ${got}`, { retryable: false }));
      }
      resolve(result);
    });
  });
}

function parseJson(line: string): unknown {
  const trimmed = line.trim();
  if (!/^[[{"\d-]|^(true|false|null)$/.test(trimmed)) return undefined;
  try {
    return JSON.parse(trimmed);
  } catch {
    return undefined;
  }
}

function isProgressLine(v: unknown): v is { progress?: number; status?: string } {
  if (!v || typeof v !== "object" || Array.isArray(v)) return false;
  const keys = Object.keys(v);
  return (
    keys.length > 0 &&
    keys.every((k) => k === "progress" || k === "status") &&
    ((v as { progress?: unknown }).progress === undefined || typeof (v as { progress?: unknown }).progress === "number") &&
    ((v as { status?: unknown }).status === undefined || typeof (v as { status?: unknown }).status === "string")
  );
}
