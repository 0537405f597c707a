// `@app/auth/runtime`: one process model for the services, driven by each one's declaration.
// Environment config, the app builder (middleware, auth, docs, MCP, webhooks, error handling),
// Postgres, logging, rate limits and the OpenAPI pieces every service document shares. Start,
// ordered shutdown and the admin command line are main.ts's (`main.js serve|admin <service.js>`).
export type { ServiceConfig } from './env.js';
export type { ServiceDeclaration, ServiceDeps } from './declaration.js';
export { onAppPrototypes } from './app-server.js';
export { createServiceApp, serviceStreamHub } from './service-app.js';
export type { RecurringJob } from './recurring.js';
// How the test harness builds a service as its process does.
export { harnessKit } from './harness-kit.js';
export { apiRouter, routeContext, type RouteContext } from './routes.js';
export {
  WRITES_THROUGH_FUNCTION,
  createPool,
  inTransaction,
  isoTimestampSql,
  pgTimestampToIso,
} from '../database/database.js';
export { compiledOnce } from '../database/compiled-once.js';
export { chargeRequests } from './rate-limit.js';
// The origin clients reach a service at (PUBLIC_URL, or the one a request came through).
export { publicOrigin } from '../identity/bearer.js';
export {
  apiKeysTag,
  documentCommonHeaders,
  documentUriLimit,
  openapiLicense,
  openapiServers,
  securitySchemes,
  servicePortRoutes,
  withApiKeyScopes,
} from './openapi.js';
// What every worker process runs to forget OAuth clients that never got a grant (tests run it at will).
export { forgetUnusedClients } from '../oauth/repository.js';
