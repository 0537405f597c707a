import type { RequestHandler, Router } from 'express';

/**
 * `router`, entered only by requests whose path is one of `prefixes` or lies below one, in any
 * letter case (Express matches routes so). A router mounted at `/` is otherwise entered by every
 * request and walks all its routes before it passes the request on: for the service's own pages
 * (docs, account, OAuth, MCP) that was four dispatches on every API request.
 */
export function under(prefixes: readonly string[], router: Router): RequestHandler {
  const exact = prefixes.map((p) => p.toLowerCase());
  const below = exact.map((p) => `${p}/`);
  return (req, res, next) => {
    const path = req.path.toLowerCase();
    if (exact.includes(path) || below.some((p) => path.startsWith(p))) return router(req, res, next);
    next();
  };
}
