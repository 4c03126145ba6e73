// The loopback Convex test server as a library.
export {
  startTestServer,
  fixtureConvexDir,
  type TestServer,
  type TestServerOptions,
  type ProjectSchema,
  type FixtureSchema,
} from "./server";
export { seed, type Seeded, type SeedOptions } from "./seed";
export { modulesFromDirectory, schemaFromDirectory, type ModuleMap } from "./modules";
export { statsPath, statsResetPath } from "./statsEndpoint";
export type { FunctionStats, ServerStats } from "./instruments/stats";
