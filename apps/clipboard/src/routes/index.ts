import { Router, type RequestHandler } from 'express';
import type { StreamHub } from '@app/auth/streams';
import { requireScope } from '@app/auth/identity';
import { jsonBody } from '@app/http-errors/validation';
import type { ServiceDeps } from '@app/auth/runtime';
import type { Database } from '../db/schema.js';
import { assistantView } from '../domain/mappers.js';
import { clipboardRoutes } from './clipboard.routes.js';
import type { Guards } from './guards.js';
import { settingsRoutes } from './settings.routes.js';
import { snippetsRoutes } from './snippets.routes.js';
import { syncRoutes } from './sync.routes.js';

/** `first`, then `second` unless `first` failed. */
function chain(first: RequestHandler, second: RequestHandler): RequestHandler {
  return (req, res, next) => first(req, res, (err?: unknown) => (err ? next(err) : second(req, res, next)));
}

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

/**
 * Every /api route of the clipboard service (the keys routes are mounted beside it), on one
 * router: a router per module would be one more dispatch for each module a request passes.
 */
export function apiRoutes(deps: ServiceDeps<Database>, streams: StreamHub): Router {
  const json = jsonBody({ limit: deps.config.bodyLimitBytes });
  const guards: Guards = {
    read: (scope) => requireScope(scope),
    write: (scope) => chain(requireScope(scope), json),
  };
  const router = Router();
  router.use(assistantAnswers);
  // The literal /clipboard/bulk, /pull and /sync routes come before /clipboard/:id.
  syncRoutes(router, deps, guards, streams);
  clipboardRoutes(router, deps, guards);
  snippetsRoutes(router, deps, guards);
  settingsRoutes(router, deps, guards);
  return router;
}
