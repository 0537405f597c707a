import type { Express } from 'express';
import { createServiceApp, isRead, serviceStreamHub } from '@app/auth/runtime';
import { mcpInstructions, mcpPrompts, mcpToolNotes } from './mcp.js';
import { mcpTools } from './mcp-tools.js';
import { openapiDocument } from './openapi.js';
import { authConfig } from './auth.js';
import type { AppDeps } from './deps.js';
import { MEETING_EVENTS } from './domain/events.js';
import { apiRoutes } from './routes/index.js';

/** Builds the meetings app; it never listens by itself. */
export function createApp(deps: AppDeps): Express {
  const streams = serviceStreamHub('meetings', deps);
  return createServiceApp({
    ...deps,
    auth: authConfig(deps.config),
    envelope: 'rich',
    openapiDocument,
    mcp: { instructions: mcpInstructions, toolNotes: mcpToolNotes, prompts: mcpPrompts, tools: mcpTools, redact: ['privateNotes'] },
    rateLimits: [
      // Reads and writes are counted separately, as the spec says.
      { name: 'reads', limit: deps.config.rateLimitReadsPerMinute, applies: isRead },
      { name: 'writes', limit: deps.config.rateLimitWritesPerMinute, applies: (m) => !isRead(m) },
    ],
    // Counted here (in Redis) rather than in the gateway, so it holds across every instance and
    // gateway replica; the gateway's address is trusted (TRUST_PROXY) to name the client.
    networkCap: deps.config.rateLimitNetworkPerMinute,
    keysPath: '/api/me/keys',
    webhooks: { path: '/api/webhooks', catalog: MEETING_EVENTS },
    streams,
    api: { path: '/api', router: apiRoutes(deps, streams), scopeByMethod: { read: 'meetings:read', write: 'meetings:write' } },
  });
}
export { migrations } from './db/migrations/index.js';
