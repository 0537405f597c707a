import type { RequestHandler, Router } from 'express';
import { apiRouter, type RouteContext } from '@app/auth/runtime';
import type { Database } from '../db/schema.js';
import { assistantView } from '../domain/mappers.js';
import { clipboardRoutes } from './clipboard.routes.js';
import { settingsRoutes } from './settings.routes.js';
import { snippetsRoutes } from './snippets.routes.js';
import { syncRoutes } from './sync.routes.js';

/**
 * OAuth callers (an assistant's connected app, on REST) get every answer with sensitive and sealed
 * items' content null, as MCP shows them (DESIGN.md "Hardening"); keys and sessions get items whole.
 */
const assistantAnswers: RequestHandler = (req, res, next) => {
  if (req.caller?.oauth) {
    const send = res.json.bind(res);
    res.json = (body: unknown) => send(assistantView(body));
  }
  next();
};

/** Before every route: what OAuth callers are shown. */
function assistantRoutes(router: Router): void {
  router.use(assistantAnswers);
}

/**
 * Every /api route of the clipboard service (the keys routes are mounted beside it), on one
 * router: a router per module would be one more dispatch for each module a request passes. Each
 * route checks the scope the spec's table names with `ctx.guards`, then reads its body.
 */
export function apiRoutes(ctx: RouteContext<Database>): Router {
  // The literal /clipboard/bulk, /pull and /sync routes come before /clipboard/:id.
  return apiRouter(ctx, [assistantRoutes, syncRoutes, clipboardRoutes, snippetsRoutes, settingsRoutes]);
}
