import type { Express } from 'express';
import { createServiceApp, routeContext, serviceStreamHub, type ServiceDeps } from '@app/auth/runtime';
import type { Database } from './db/schema.js';
import { sweepExpired } from './domain/items.service.js';
import { mcpInstructions, mcpPrompts, mcpToolNotes, withoutPrivateContent } from './mcp.js';
import { mcpTools } from './mcp-tools.js';
import { openapiDocument } from './openapi.js';
import { apiRoutes } from './routes/index.js';

/** The pause between two sweeps for expired sensitive items: an item is gone within this and the sweep's run of its due time. */
const SWEEP_EVERY_MS = 500;

/**
 * Builds the clipboard app: the runtime reads its declaration (service.ts) in `deps.service`;
 * this adds what is the app's own. It never listens by itself.
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
      present: withoutPrivateContent,
    },
    // Sensitive items are deleted on time by every worker process, whichever replica created them.
    recurringJobs: [{ name: 'clipboard-sensitive-sweep', everyMs: SWEEP_EVERY_MS, run: () => sweepExpired(deps.db) }],
    streams,
    // Each route checks the scope the spec's table names, then parses its body.
    api: { router: apiRoutes(routeContext(deps, streams)) },
  });
}
export { migrations } from './admin.js';
