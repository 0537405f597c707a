import { Router } from 'express';
import type { AppDeps } from '../deps.js';
import { tasksRouter } from './tasks.routes.js';

/** Every /api/v1 route of the tasks service (the keys routes are mounted beside it). */
export function apiRoutes(deps: AppDeps): Router {
  const router = Router();
  router.use(tasksRouter(deps));
  return router;
}
