import type { Express } from 'express';
import { createServiceApp, routeContext, serviceStreamHub, type ServiceDeps } from '@app/auth/runtime';
import type { Database } from './db/schema.js';
import { mcpInstructions, mcpToolNotes, mcpTools } from './mcp.js';
import { openapiDocument } from './openapi.js';
import { apiRoutes } from './routes/index.js';

/**
 * Builds the __name__ app: the runtime reads its declaration (service.ts) in `deps.service`; this
 * adds what is the app's own. It never listens by itself.
 */
export function createApp(deps: ServiceDeps<Database>): Express {
  const streams = serviceStreamHub(deps);
  return createServiceApp({
    ...deps,
    openapiDocument,
    mcp: { instructions: mcpInstructions, toolNotes: mcpToolNotes, prompts: [], tools: mcpTools },
    streams,
    api: {
      router: apiRoutes(routeContext(deps, streams)),
      scopeByMethod: { read: '__name__:read', write: '__name__:write' },
    },
  });
}
export { migrations } from './admin.js';
