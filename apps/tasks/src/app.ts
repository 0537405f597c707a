import type { Express } from 'express';
import { createServiceApp, routeContext, serviceStreamHub, type ServiceDeps } from '@app/auth/runtime';
import { adminHooks } from './accounts.js';
import { keySweepJob } from './idempotency.js';
import type { Database } from './db/schema.js';
import { mcpInstructions, mcpPrompts, mcpToolNotes } from './mcp.js';
import { mcpTools } from './mcp-tools.js';
import { openapiDocument } from './openapi.js';
import { taskCaches } from './domain/caches.js';
import { apiRoutes } from './routes/index.js';
import { reminderJobs } from './domain/reminders.jobs.js';
import { queueMissedJobs } from './db/reminders.jobs.repository.js';
import { taskWebhookFilter } from './domain/webhook-filter.js';

/**
 * Builds the tasks app: the runtime reads its declaration (service.ts) in `deps.service`; this
 * adds what is the app's own. It never listens by itself.
 */
export function createApp(deps: ServiceDeps<Database>): Express {
  const streams = serviceStreamHub(deps);
  return createServiceApp({
    ...deps,
    openapiDocument,
    mcp: { instructions: mcpInstructions, toolNotes: mcpToolNotes, prompts: mcpPrompts, tools: mcpTools },
    accountHooks: adminHooks,
    streams,
    webhookFilter: taskWebhookFilter,
    // Reminders and due times fire from the worker's queue.
    queue: { tasks: reminderJobs(deps.db), catchUp: () => queueMissedJobs(deps.db) },
    recurringJobs: [keySweepJob(deps.db)],
    api: {
      router: apiRoutes({ ...routeContext(deps, streams), caches: taskCaches(deps.db) }),
      scopeByMethod: { read: 'tasks:read', write: 'tasks:write' },
    },
  });
}
export { adminHooks, migrations } from './admin.js';
