import type { Express } from 'express';
import { createServiceApp, serviceStreamHub } from '@app/auth/runtime';
import { adminHooks } from './accounts.js';
import { mcpInstructions, mcpPrompts, mcpToolNotes } from './mcp.js';
import { mcpTools } from './mcp-tools.js';
import { openapiDocument } from './openapi.js';
import { authConfig } from './auth.js';
import type { AppDeps } from './deps.js';
import { taskCaches } from './domain/caches.js';
import { TASK_EVENTS } from './domain/tasks.service.js';
import { apiRoutes } from './routes/index.js';

/** Builds the tasks app; it never listens by itself. */
export function createApp(deps: AppDeps): Express {
  const streams = serviceStreamHub('tasks', deps);
  return createServiceApp({
    ...deps,
    auth: authConfig(deps.config),
    envelope: 'rich',
    openapiDocument,
    mcp: { instructions: mcpInstructions, toolNotes: mcpToolNotes, prompts: mcpPrompts, tools: mcpTools },
    rateLimits: [{ name: 'api', limit: deps.config.rateLimitPerMinute }],
    keysPath: '/api/v1/keys',
    accountHooks: adminHooks,
    webhooks: { path: '/api/v1/webhooks', catalog: TASK_EVENTS },
    streams,
    api: { path: '/api/v1', router: apiRoutes(deps, streams, taskCaches(deps.db)), scopeByMethod: { read: 'tasks:read', write: 'tasks:write' } },
  });
}
export { migrations } from './db/migrations/index.js';
export { adminHooks } from './accounts.js';
