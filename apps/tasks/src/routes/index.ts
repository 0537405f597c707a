import type { Router } from 'express';
import { apiRouter } from '@app/auth/runtime';
import { batchRoutes } from './batch.routes.js';
import { tasksRoutes, type TasksRouteContext } from './tasks.routes.js';
import { remindersRoutes } from './reminders.routes.js';

/**
 * Every /api/v1 route of the tasks service (the keys routes are mounted beside it), on one router
 * (a router per module would be one more dispatch on every request). No route checks a scope:
 * app.ts's scopeByMethod has, before any of them runs (GET/HEAD tasks:read, else write).
 */
export function apiRoutes(ctx: TasksRouteContext): Router {
  return apiRouter(ctx, [tasksRoutes, batchRoutes, remindersRoutes]);
}
