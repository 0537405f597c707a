import { Router, type RequestHandler } from 'express';
import { jsonBody } from '@app/http-errors/validation';
import { requireScope } from '../identity/middleware.js';
import type { StreamHub } from '../streams/hub.js';
import type { ServiceDeps } from './declaration.js';

/**
 * Per-route scope checks, for a service whose spec gives routes their own scopes (clipboard): the
 * scope (403) is checked before the body is read, so it precedes any 400. A service that checks
 * scopes by method (createServiceApp's `scopeByMethod`) leaves them unused.
 */
interface RouteGuards {
  read(scope: string): RequestHandler;
  /** The scope, then the JSON body (bounded by BODY_LIMIT_BYTES). */
  write(scope: string): RequestHandler;
}

/** What every routes module of a service is given: the app's dependencies, its change streams and its route guards. */
export interface RouteContext<DB = unknown> extends ServiceDeps<DB> {
  streams: StreamHub;
  guards: RouteGuards;
}

/** One routes module of a service: `xRoutes(router, ctx)` adds its routes to the service's one router. */
type RoutesModule<C = RouteContext> = (router: Router, ctx: C) => void;

/** `first`, then `second` unless `first` failed. */
function chain(first: RequestHandler, second: RequestHandler): RequestHandler {
  return (req, res, next) => first(req, res, (err?: unknown) => (err ? next(err) : second(req, res, next)));
}

/** The context of a service's routes modules (an app adds its own, tasks its caches). */
export function routeContext<DB>(deps: ServiceDeps<DB>, streams: StreamHub): RouteContext<DB> {
  const json = jsonBody({ limit: deps.config.bodyLimitBytes });
  return {
    ...deps,
    streams,
    guards: { read: (scope) => requireScope(scope), write: (scope) => chain(requireScope(scope), json) },
  };
}

/**
 * A service's API router: ONE router to which each module, in order, adds its routes (a router
 * per module would be one more dispatch on every request for each module it passes).
 */
export function apiRouter<C>(ctx: C, modules: readonly RoutesModule<C>[]): Router {
  const router = Router();
  for (const add of modules) add(router, ctx);
  return router;
}
