import type { Router } from 'express';
import type { StreamHub } from '@app/auth/streams';
import type { ServiceDeps } from '@app/auth/runtime';
import type { Database } from '../db/schema.js';
import type { TaskCaches } from '../domain/caches.js';
import { tasksRouter } from './tasks.routes.js';

/**
 * Every /api/v1 route of the tasks service (the keys routes are mounted beside it): the task
 * routes' own router, mounted as it is (a router around it would be one more dispatch on every
 * request). No route checks a scope: app.ts's scopeByMethod has, before any of them runs
 * (GET/HEAD tasks:read, else write).
 */
export function apiRoutes(deps: ServiceDeps<Database>, streams: StreamHub, caches: TaskCaches): Router {
  return tasksRouter(deps, streams, caches);
}
