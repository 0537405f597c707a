import { Router, type Express } from 'express';
import { createServiceApp, routeContext, serviceStreamHub, type ServiceDeps } from '@app/auth/runtime';
import type { Database } from './db/schema.js';
import { mcpInstructions, mcpPrompts, mcpToolNotes } from './mcp.js';
import { mcpTools } from './mcp-tools.js';
import { openapiDocument } from './openapi.js';
import { calendarFeedRouter } from './routes/calendar.routes.js';
import { connectionsPublicRoutes } from './routes/connections.routes.js';
import { apiRoutes } from './routes/index.js';
import { queueMissedTaskSyncs } from './db/task-sync.repository.js';
import { taskSyncJobs } from './domain/task-sync.jobs.js';

/**
 * Builds the meetings app: the runtime reads its declaration (service.ts) in `deps.service`,
 * the reads and writes counted apart and the network cap among it; this adds what is the app's
 * own. It never listens by itself.
 */
export function createApp(deps: ServiceDeps<Database>): Express {
  const streams = serviceStreamHub(deps);
  const context = routeContext(deps, streams);
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
    // Actions and their tasks keep completion in step from the worker's queue.
    queue: {
      tasks: taskSyncJobs(deps.db, deps.config.webhooks.secretKeys, deps.logger),
      catchUp: () => queueMissedTaskSyncs(deps.db),
    },
    // The account page shows the tasks connection, with Connect and Disconnect.
    accountPage: { connectionsPath: '/api/me/connections' },
    api: {
      router: apiRoutes(context),
      // Routes without credentials: the calendar feed's secret address, the Client ID Metadata Document.
      open: Router().use(calendarFeedRouter(context), connectionsPublicRoutes(deps)),
      // The feed's address is the caller's own setting, which DESIGN gives to a reader.
      scopeByMethod: { read: 'meetings:read', write: 'meetings:write', readScopedWrites: ['/me/calendar-feed'] },
    },
  });
}
export { migrations } from './admin.js';
