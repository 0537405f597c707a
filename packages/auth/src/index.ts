export { authMigration, type AuthDatabase } from './tables.js';
export { cookieName, type AuthConfig } from './config.js';
export { identify, authenticate, requireScope, requireScopeForMethod, requireSession, callerTimezone, isValidTimezone, type Caller } from './middleware.js';
export { cors } from './cors.js';
export { keysRouter, createApiKey, createSession, type CreatedKey } from './keys.js';
export { createRateLimit, isRead, type RateLimitOptions } from './rate-limit.js';
export { runAdminCommand, AdminError, type AdminHooks } from './admin.js';
export { hashSecret } from './tokens.js';
