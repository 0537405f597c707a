import { Router } from 'express';
import type { StreamHub } from '@app/auth/streams';
import type { AppDeps } from '../deps.js';
import { actionsRoutes } from './actions.routes.js';
import { changesRoutes } from './changes.routes.js';
import { itemsRoutes } from './items.routes.js';
import { meetingsRoutes } from './meetings.routes.js';
import { meRoutes } from './me.routes.js';
import { notesRoutes } from './notes.routes.js';
import { peopleRoutes } from './people.routes.js';
import { seriesRoutes } from './series.routes.js';

/**
 * Every /api route of the meetings service (the keys routes are mounted beside it). No route checks
 * a scope: app.ts's scopeByMethod has, before any of them runs (GET/HEAD meetings:read, else write).
 */
export function apiRoutes(deps: AppDeps, streams: StreamHub): Router {
  const router = Router();
  const { db } = deps;
  router.use(meRoutes(db), notesRoutes(db), peopleRoutes(db), seriesRoutes(db), meetingsRoutes(db), itemsRoutes(db), actionsRoutes(db), changesRoutes(db, streams));
  return router;
}
