import type { RequestHandler } from 'express';
import { AppError } from '@app/http-errors';

/** The methods an OpenAPI path item may name, in the order an `Allow` header lists them. */
const OPERATIONS = ['get', 'post', 'put', 'patch', 'delete'] as const;

interface PathMethods {
  pattern: RegExp;
  methods: ReadonlySet<string>;
  allow: string;
}

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** One path segment as a pattern: a parameter may be all of it (`{id}`) or part of it (`{token}.ics`). */
const segmentPattern = (segment: string): string =>
  `/${segment
    .split(/\{[^}]+\}/)
    .map(escapeRegExp)
    .join('[^/]+')}`;

/**
 * The route table of a service: each path template (`/api/clipboard/{id}`) with its methods,
 * concrete paths before templated ones as OpenAPI matches them (so `/api/clipboard/sync` is the
 * sync path, never an item id), matched in any letter case and with a trailing slash as Express
 * matches routes.
 */
function routeTable(paths: Readonly<Record<string, readonly string[]>>): PathMethods[] {
  return Object.entries(paths)
    .map(([template, operations]) => {
      const segments = template.split('/').slice(1);
      const methods = OPERATIONS.filter((op) => operations.includes(op)).map((op) => op.toUpperCase());
      const all = [...methods.flatMap((m) => (m === 'GET' ? ['GET', 'HEAD'] : [m])), 'OPTIONS'];
      const source = segments.map(segmentPattern).join('');
      return {
        entry: { pattern: new RegExp(`^${source}/?$`, 'i'), methods: new Set(all), allow: all.join(', ') },
        // A literal segment sorts before a parameter at the same place.
        rank: segments.map((s) => (s.includes('{') ? '1' : '0')).join(''),
      };
    })
    .sort((a, b) => (a.rank < b.rank ? -1 : a.rank > b.rank ? 1 : 0))
    .map(({ entry }) => entry);
}

/** The operations of each path of an OpenAPI document (`{ '/api/x': ['get', 'post'] }`). */
export function documentedMethods(document: object): Record<string, string[]> {
  const paths = (document as { paths?: Record<string, object> }).paths ?? {};
  return Object.fromEntries(Object.entries(paths).map(([path, item]) => [path, Object.keys(item)]));
}

/**
 * Methods by path, decided once for the whole app from its route table (the OpenAPI document and
 * the service's own pages): a method the path does not have is a 405 in the service's envelope
 * with `Allow` naming the path's methods, and OPTIONS (not a CORS preflight, which CORS answers)
 * is a 204 with that `Allow`. Express's own OPTIONS answer gathers the methods of every route whose
 * pattern matches, so `/:id` lent its DELETE to `/sync`; this table does not. Paths outside it
 * (MCP, OAuth: their protocols answer methods themselves) pass on unchanged.
 */
export function methodGuard(paths: Readonly<Record<string, readonly string[]>>): RequestHandler {
  const table = routeTable(paths);
  return (req, res, next) => {
    const entry = table.find((e) => e.pattern.test(req.path));
    if (!entry || (entry.methods.has(req.method) && req.method !== 'OPTIONS')) return next();
    if (req.method === 'OPTIONS') {
      if (req.get('access-control-request-method') !== undefined) return next();
      res.set('Allow', entry.allow).status(204).end();
      return;
    }
    next(
      new AppError(405, 'method_not_allowed', `${req.method} is not allowed here; this path allows ${entry.allow}`, {
        headers: { Allow: entry.allow },
      }),
    );
  };
}
