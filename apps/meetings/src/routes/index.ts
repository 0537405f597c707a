import { Router } from 'express';
import type { AppDeps } from '../app.js';

/** Every /api route of the meetings service (the keys routes are mounted beside it). */
export function apiRoutes(_deps: AppDeps): Router {
  const router = Router();
  return router;
}
