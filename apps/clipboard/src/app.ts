import type { Express } from 'express';
import { createServiceApp, serviceStreamHub, type ServiceDeps } from '@app/auth/runtime';
import type { Database } from './db/schema.js';
import { mcpInstructions, mcpPrompts, mcpToolNotes } from './mcp.js';
import { mcpTools } from './mcp-tools.js';
import { openapiDocument } from './openapi.js';
import { apiRoutes } from './routes/index.js';

/**
 * Builds the clipboard app: the runtime reads its declaration (service.ts) in `deps.service`;
 * this adds what is the app's own. It never listens by itself.
 */
export function createApp(deps: ServiceDeps<Database>): Express {
  const streams = serviceStreamHub(deps);
  return createServiceApp({
    ...deps,
    openapiDocument,
    mcp: { instructions: mcpInstructions, toolNotes: mcpToolNotes, prompts: mcpPrompts, tools: mcpTools },
    streams,
    // Each route checks the scope the spec's table names, then parses its body.
    api: { router: apiRoutes(deps, streams) },
  });
}
export { migrations } from './db/migrations/index.js';
