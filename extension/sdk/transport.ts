import type { ConvexClient } from "convex/browser";

/** The parts of a ConvexClient the SDK uses (a test may hand in its own). */
export type Transport = Pick<ConvexClient, "mutation" | "query" | "onUpdate" | "close">;
