// The loopback Convex test server as a library.
export {
  startTestServer,
  projectConvexDir,
  fixtureConvexDir,
  defaultConflictWindowMs,
  type TestServer,
  type TestServerOptions,
} from "./server";
export { seed, defaultCapabilities, type Seeded, type SeedOptions } from "./seed";
export { modulesFromDirectory, schemaFromDirectory, type ModuleMap } from "./modules";
export { statsPath, statsResetPath } from "./statsEndpoint";
export type { FunctionStats, ServerStats } from "./instruments/stats";
