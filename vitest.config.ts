import { defineConfig } from "vitest/config";

// Three layers run by vitest; the extension-host and UI layers run inside code-server (test/harness).
export default defineConfig({
  test: {
    projects: [
      { test: { name: "unit", include: ["test/unit/**/*.test.ts"], environment: "node" } },
      {
        test: {
          name: "backend",
          include: ["test/backend/**/*.test.ts"],
          environment: "edge-runtime",
          // The deep-queue tests insert tens of thousands of jobs; on a busy 2-core CI machine that takes seconds.
          testTimeout: 60_000,
          server: { deps: { inline: ["convex-test"] } },
        },
      },
      {
        test: {
          name: "engine",
          include: ["test/engine/**/*.test.ts"],
          environment: "node",
          testTimeout: 60_000,
          hookTimeout: 60_000,
          server: { deps: { inline: ["convex-test"] } },
        },
      },
      {
        // 8 real CLI workers × 2,000 jobs through kills, drops and a revoked key: `npm run test:faults`.
        test: {
          name: "faults",
          include: ["test/faults/**/*.test.ts"],
          environment: "node",
          testTimeout: 300_000,
          hookTimeout: 120_000,
          server: { deps: { inline: ["convex-test"] } },
        },
      },
      {
        // Benchmarks: run by `npm run bench`, never by `npm test`.
        test: {
          name: "bench",
          include: ["bench/**/*.bench.ts"],
          environment: "node",
          testTimeout: 600_000,
          hookTimeout: 600_000,
          server: { deps: { inline: ["convex-test"] } },
        },
      },
    ],
  },
});
