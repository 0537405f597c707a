import type { Router } from 'express';
import { apiRouter, type RouteContext } from '@app/auth/runtime';
import type { Database } from '../db/schema.js';
import { actionsRoutes } from './actions.routes.js';
import { calendarRoutes } from './calendar.routes.js';
import { changesRoutes } from './changes.routes.js';
import { connectionsRoutes } from './connections.routes.js';
import { itemsRoutes } from './items.routes.js';
import { meetingsRoutes } from './meetings.routes.js';
import { meRoutes } from './me.routes.js';
import { notesRoutes } from './notes.routes.js';
import { peopleRoutes } from './people.routes.js';
import { seriesRoutes } from './series.routes.js';

/**
 * Every /api route of the meetings service (the keys routes are mounted beside it), on one router
 * (a router per module would be one more dispatch for each module a request passes). No route checks
 * a scope: app.ts's scopeByMethod has, before any of them runs (GET/HEAD meetings:read, else write).
 */
export function apiRoutes(ctx: RouteContext<Database>): Router {
  return apiRouter(ctx, [
    meRoutes,
    connectionsRoutes,
    notesRoutes,
    peopleRoutes,
    seriesRoutes,
    meetingsRoutes,
    itemsRoutes,
    actionsRoutes,
    changesRoutes,
    calendarRoutes,
  ]);
}
