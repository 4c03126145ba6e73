// Command-line options of the test server CLI (see cli.ts).
import { resolve } from "node:path";

export type CliOptions = {
  port: number;
  seed?: number;
  capabilities: string[];
  dir?: string;
  conflictWindowMs?: number;
  /** Serve with stock convex-test, which walks every table for every query (for benchmarks' reference figures). */
  stockScan?: boolean;
};

export const usage =
  "usage: npm run testserver -- [--port P] [--seed N] [--capabilities a,b] [--dir convexFolder] [--conflict-window-ms N] [--stock-scan]\n" +
  "  --seed N                an org, its client keys, an operator key and N enrolled workers (up to 10 000)\n" +
  "  --conflict-window-ms N  a mutation counts a would-be OCC conflict when a write committed in the N ms before it\n" +
  "                          ran, by a caller it had not heard from yet, falls into its read set (default 20)\n" +
  "  --stock-scan            run stock convex-test, whose every query walks every table (a benchmark's reference)";

function wholeNumber(flag: string, text: string | undefined, max: number): number {
  const value = Number(text);
  if (text === undefined || !/^\d+$/.test(text) || value > max) {
    throw new Error(`${flag} needs a whole number from 0 to ${max}, got ${text === undefined ? "nothing" : JSON.stringify(text)}`);
  }
  return value;
}

export function parseCliArgs(argv: string[]): CliOptions {
  const options: CliOptions = { port: 0, capabilities: [] };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = argv[i + 1];
    if (flag === "--stock-scan") {
      options.stockScan = true;
      continue;
    }
    switch (flag) {
      case "--port":
        options.port = wholeNumber(flag, value, 65535);
        break;
      case "--seed":
        options.seed = wholeNumber(flag, value, 10_000);
        break;
      case "--capabilities":
        if (!value) throw new Error("--capabilities needs a comma-separated list");
        options.capabilities = value.split(",").map((c) => c.trim()).filter(Boolean);
        break;
      case "--conflict-window-ms":
        options.conflictWindowMs = wholeNumber(flag, value, 60_000);
        break;
      case "--dir":
        if (!value) throw new Error("--dir needs a folder");
        options.dir = resolve(value);
        break;
      default:
        throw new Error(`Unknown option ${JSON.stringify(flag)}`);
    }
    i++;
  }
  return options;
}
