import type { Express } from 'express';
import { createServiceApp, serviceStreamHub } from '@app/auth/runtime';
import { mcpInstructions, mcpPrompts, mcpToolNotes } from './mcp.js';
import { mcpTools } from './mcp-tools.js';
import { openapiDocument } from './openapi.js';
import { authConfig } from './auth.js';
import type { AppDeps } from './deps.js';
import { CLIPBOARD_EVENTS } from './domain/events.js';
import { apiRoutes } from './routes/index.js';

/** Builds the clipboard app; it never listens by itself. */
export function createApp(deps: AppDeps): Express {
  const streams = serviceStreamHub('clipboard', deps);
  return createServiceApp({
    ...deps,
    auth: authConfig(deps.config),
    envelope: 'simple',
    openapiDocument,
    mcp: { instructions: mcpInstructions, toolNotes: mcpToolNotes, prompts: mcpPrompts, tools: mcpTools },
    rateLimits: [{ name: 'api', limit: deps.config.rateLimitPerMinute }],
    keysPath: '/api/settings/keys',
    webhooks: { path: '/api/clipboard/webhooks', catalog: CLIPBOARD_EVENTS },
    // Each route checks the scope the spec's table names, then parses its body.
    streams,
    api: { path: '/api', router: apiRoutes(deps, streams) },
  });
}
export { migrations } from './db/migrations/index.js';
