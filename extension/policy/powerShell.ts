import { spawn } from "node:child_process";

/** The piece of a child process a long-lived PowerShell is used through, so tests can play recorded output. */
export type LineProcess = {
  write(line: string): void;
  onLine(listener: (line: string) => void): void;
  onExit(listener: (why: string) => void): void;
  kill(): void;
};

/** One PowerShell that runs `script` (a loop answering each line read from stdin with one line), hidden, stderr dropped. */
export function spawnPowerShell(script: string): LineProcess {
  const child = spawn("powershell.exe", ["-NoLogo", "-NoProfile", "-NonInteractive", "-Command", script], {
    windowsHide: true,
    stdio: ["pipe", "pipe", "ignore"],
  });
  child.unref();
  let rest = "";
  const listeners: Array<(line: string) => void> = [];
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (chunk: string) => {
    const lines = (rest + chunk).split(/\r?\n/);
    rest = lines.pop() ?? "";
    for (const line of lines) listeners.forEach((l) => l(line));
  });
  return {
    write: (line) => void child.stdin.write(line + "\n"),
    onLine: (l) => void listeners.push(l),
    onExit: (l) => {
      child.on("exit", (code, signal) => l(`PowerShell exited (${signal ?? code})`));
      child.on("error", (e) => l(`PowerShell could not start: ${e.message}`));
    },
    kill: () => void child.kill(),
  };
}

/** What a line means to the request waiting for it: its answer, the script's own error, or nothing (a banner, a warning). */
export type LineAnswer<T> = { value: T } | { error: string } | undefined;

const ANSWER_TIMEOUT_MS = 5_000;

/**
 * Asks one long-lived process a line at a time and hands each waiting request the first line that answers it, in
 * order. The process starts on the first question. When it exits, fails to start or does not answer in time, every
 * question fails, now and later (`why` says why): the caller drops it for the session.
 */
export class LineAsker {
  private process: LineProcess | undefined;
  private exited: string | undefined;
  private readonly waiting: Array<{ parse(line: string): LineAnswer<unknown>; resolve(v: unknown): void; reject(e: Error): void; timer: ReturnType<typeof setTimeout> }> = [];

  constructor(
    private readonly start: () => LineProcess,
    private readonly failure: (why: string) => Error = (why) => new Error(why),
  ) {}

  get why(): string | undefined {
    return this.exited;
  }

  ask<T>(request: string, parse: (line: string) => LineAnswer<T>): Promise<T> {
    if (this.exited) return Promise.reject(this.failure(this.exited));
    const process = (this.process ??= this.launch());
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => this.failAll(`PowerShell did not answer within ${ANSWER_TIMEOUT_MS} ms`), ANSWER_TIMEOUT_MS);
      this.waiting.push({ parse, resolve, reject, timer });
      process.write(request);
    });
  }

  dispose(): void {
    this.process?.kill();
    this.failAll("disposed");
  }

  private launch(): LineProcess {
    const process = this.start();
    process.onLine((line) => {
      const next = this.waiting[0];
      const answer = next?.parse(line);
      if (!next || answer === undefined) return;
      this.waiting.shift();
      clearTimeout(next.timer);
      if ("error" in answer) next.reject(this.failure(answer.error));
      else next.resolve(answer.value);
    });
    process.onExit((why) => this.failAll(why));
    return process;
  }

  private failAll(why: string): void {
    this.exited ??= why;
    this.process?.kill();
    for (const w of this.waiting.splice(0)) {
      clearTimeout(w.timer);
      w.reject(this.failure(why));
    }
  }
}
