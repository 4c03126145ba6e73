/** The CLI's line on the first Ctrl-C: what it waits for, if anything, and how to stop at once. */
export function drainingLine(running: number): string {
  if (running === 0) return "draining: no job is running; stopping";
  return `draining: finishing ${running} running ${running === 1 ? "job" : "jobs"}; press Ctrl-C again to stop now`;
}
