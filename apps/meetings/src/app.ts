import type { Express } from 'express';
import { createServiceApp, routeContext, serviceStreamHub, type ServiceDeps } from '@app/auth/runtime';
import type { Database } from './db/schema.js';
import { mcpInstructions, mcpPrompts, mcpToolNotes } from './mcp.js';
import { mcpTools } from './mcp-tools.js';
import { openapiDocument } from './openapi.js';
import { connectionsPublicRoutes } from './routes/connections.routes.js';
import { apiRoutes } from './routes/index.js';

/**
 * Builds the meetings app: the runtime reads its declaration (service.ts) in `deps.service`,
 * the reads and writes counted apart and the network cap among it; this adds what is the app's
 * own. It never listens by itself.
 */
export function createApp(deps: ServiceDeps<Database>): Express {
  const streams = serviceStreamHub(deps);
  return createServiceApp({
    ...deps,
    openapiDocument,
    mcp: {
      instructions: mcpInstructions,
      toolNotes: mcpToolNotes,
      prompts: mcpPrompts,
      tools: mcpTools,
      redact: ['privateNotes'],
    },
    streams,
    api: {
      router: apiRoutes(routeContext(deps, streams)),
      scopeByMethod: { read: 'meetings:read', write: 'meetings:write' },
      publicRouter: connectionsPublicRoutes(deps),
    },
  });
}
export { migrations } from './db/migrations/index.js';
