// The counters behind GET /__testserver/stats: per function (keyed "module:name", HTTP routes as
// "http:POST /api/jobs") how often it ran, how often it would have hit an OCC conflict and how many of its
// results were pushed to clients; plus all pushes together.
export type FunctionStats = { calls: number; conflicts: number; pushes: number };
export type ServerStats = { functions: Record<string, FunctionStats>; pushes: number; conflictWindowMs: number };

export class StatsCounter {
  private functions = new Map<string, FunctionStats>();
  private pushes = 0;

  constructor(readonly conflictWindowMs: number) {}

  private of(path: string): FunctionStats {
    let stats = this.functions.get(path);
    if (!stats) {
      stats = { calls: 0, conflicts: 0, pushes: 0 };
      this.functions.set(path, stats);
    }
    return stats;
  }

  call(path: string): void {
    this.of(path).calls++;
  }

  conflict(path: string): void {
    this.of(path).conflicts++;
  }

  push(path: string): void {
    this.of(path).pushes++;
    this.pushes++;
  }

  /** A copy, functions sorted by name. */
  snapshot(): ServerStats {
    const functions: Record<string, FunctionStats> = {};
    for (const path of [...this.functions.keys()].sort()) functions[path] = { ...this.functions.get(path)! };
    return { functions, pushes: this.pushes, conflictWindowMs: this.conflictWindowMs };
  }

  /** Zeroes every counter and answers the zeroed stats. */
  reset(): ServerStats {
    this.functions = new Map();
    this.pushes = 0;
    return this.snapshot();
  }
}
