import type { Express } from 'express';
import { createServiceApp, type AuthConfig } from '@app/auth';
import { adminHooks } from './accounts.js';
import type { Config } from './config.js';
import { mcpInstructions, mcpPrompts, mcpToolNotes } from './mcp.js';
import { openapiDocument } from './openapi.js';
import type { AppDeps } from './deps.js';
import { TASK_EVENTS } from './domain/tasks.service.js';
import { apiRoutes } from './routes/index.js';

export const SCOPES = ['tasks:read', 'tasks:write', 'webhooks'] as const;

export function authConfig(config: Pick<Config, 'allowedOrigins'>): AuthConfig {
  return { service: 'tasks', scopes: SCOPES, allowedOrigins: config.allowedOrigins };
}

/** Builds the tasks app; it never listens by itself. */
export function createApp(deps: AppDeps): Express {
  return createServiceApp({
    ...deps,
    auth: authConfig(deps.config),
    envelope: 'rich',
    openapiDocument,
    mcp: { instructions: mcpInstructions, toolNotes: mcpToolNotes, prompts: mcpPrompts },
    rateLimits: [{ name: 'api', limit: deps.config.rateLimitPerMinute }],
    keysPath: '/api/v1/keys',
    accountHooks: adminHooks,
    webhooks: { path: '/api/v1/webhooks', catalog: TASK_EVENTS },
    api: { path: '/api/v1', router: apiRoutes(deps), scopeByMethod: { read: 'tasks:read', write: 'tasks:write' } },
  });
}
