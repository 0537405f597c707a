// `@app/auth/identity`: who is calling and what they may do. Accounts, API keys and sessions, the
// middleware that checks scopes and the OpenAPI paths they answer (the auth tables: @app/auth/migrations).
export type { AuthDatabase } from './tables.js';
export type { AdminHooks } from './accounts.js';
export { callerTimezone, checkTimezoneHeader, requireSession } from './middleware.js';
export { publicOrigin } from './bearer.js';
export { canonicalTimezone, knownTimezoneSpellings } from './timezones.js';
export { createKeyBodySchema, keyIdParameter } from './keys.js';
export { CREDENTIAL_TTL_MS } from './credential-cache.js';
export { authOpenApiPaths, keyLastUsedAtSchema } from './openapi.js';
