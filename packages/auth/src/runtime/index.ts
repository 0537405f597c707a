// `@app/auth/runtime`: one process model for the three services. Environment config, the app
// builder (middleware, auth, docs, MCP, webhooks, error handling), Postgres, logging, rate limits,
// start and ordered shutdown (runService), the admin command line (runAdmin), and the OpenAPI
// pieces every service document shares.
export { envInt, serviceEnv } from './env.js';
export { runService, runAdmin } from './service.js';
export type { ServiceDeclaration, ServiceModule, ServiceDeps, RateLimitDeclaration } from './declaration.js';
export { createAppServer, onAppPrototypes } from './app-server.js';
export { createServiceApp, serviceStreamHub } from './service-app.js';
export { WRITES_THROUGH_FUNCTION, createPool, createDb, inTransaction, isoTimestampSql, migrateToLatest, pgTimestampToIso } from '../database/database.js';
export { createLogger } from './observability.js';
export { isRead } from './rate-limit.js';
export { apiKeysTag, documentCommonHeaders, openapiLicense, openapiServers, securitySchemes, operationsTag, operationalPaths, withApiKeyScopes } from './openapi.js';
