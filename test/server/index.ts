// The loopback Convex test server as a library.
export { startTestServer, projectConvexDir, fixtureConvexDir, type TestServer, type TestServerOptions } from "./server";
export { seed, defaultCapabilities, type Seeded, type SeedOptions } from "./seed";
export { modulesFromDirectory, schemaFromDirectory, type ModuleMap } from "./modules";
