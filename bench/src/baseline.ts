import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import express from 'express';
import pg from 'pg';
import { onAppPrototypes } from '@app/auth/runtime';

/**
 * The bare baseline: node:http and a pg pool, nothing else: no framework, validation, auth,
 * rate limit or logging. Each route replays statements captured from the product (or, for
 * writes, a bare INSERT/UPDATE), parses the rows into JS objects with pg's default parsers and
 * answers with plain JSON.stringify.
 *
 * A route with `via: 'express'` is served instead by a minimal Express 5 app (express.json() and
 * one handler, res.json): the framework's own floor, with nothing of the product around it.
 * `via: 'express-on-prototypes'` is the same app served as the product's services are
 * (`onAppPrototypes`: requests and responses made on the app's own prototypes, which Express
 * otherwise moves each onto as it arrives).
 *
 * Run as its own process: `node baseline.js <routes.json> <port>` with DATABASE_URL set.
 */
export interface BaselineRoute {
  /** The service schema the statements run in (first on the search_path, as in the product). */
  schema: string;
  statements: Array<{ sql: string; params: Array<string | null> }>;
  /** Parameter index -> values used round-robin (e.g. the task a PATCH updates). */
  rotate?: Record<number, string[]>;
  via?: 'express' | 'express-on-prototypes';
}

function main(): void {
  const [file, portText] = process.argv.slice(2);
  const routes = JSON.parse(readFileSync(file!, 'utf8')) as Record<string, BaselineRoute>;
  const pools = new Map<string, pg.Pool>();
  const poolFor = (schema: string) => {
    let pool = pools.get(schema);
    if (!pool) {
      pool = new pg.Pool({
        connectionString: process.env.DATABASE_URL,
        max: Number(process.env.DATABASE_POOL_SIZE ?? 20),
        options: `-c search_path=${schema},public`,
      });
      pools.set(schema, pool);
    }
    return pool;
  };
  const counters = new Map<string, number>();
  /** The route's statements in order, with this request's rotated parameters; the rows as the response body. */
  const run = async (path: string, route: BaselineRoute): Promise<object> => {
    const n = counters.get(path) ?? 0;
    counters.set(path, n + 1);
    const results: unknown[][] = [];
    for (const statement of route.statements) {
      const params = statement.params.map((p, i) => {
        const values = route.rotate?.[i];
        return values ? values[n % values.length]! : p;
      });
      results.push((await poolFor(route.schema).query(statement.sql, params)).rows);
    }
    return results.length === 1 ? { items: results[0] } : { results };
  };

  const handle = async (req: IncomingMessage, res: ServerResponse, path: string, route: BaselineRoute) => {
    // Drain the request body (writes send one, as the product's clients do).
    for await (const _ of req) void _;
    try {
      const body = JSON.stringify(await run(path, route));
      res.writeHead(200, { 'content-type': 'application/json' }).end(body);
    } catch (err) {
      res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: (err as Error).message }));
    }
  };

  const apps = { express: floorApp('express'), 'express-on-prototypes': floorApp('express-on-prototypes') };
  /** The minimal app of one kind of floor, as the product's app is set: no ETag of each body, no X-Powered-By. */
  function floorApp(via: NonNullable<BaselineRoute['via']>): express.Express {
    const app = express();
    app.set('etag', false);
    app.disable('x-powered-by');
    app.use(express.json());
    for (const [path, route] of Object.entries(routes)) {
      if (route.via !== via) continue;
      app.all(path, async (_req, res) => {
        res.json(await run(path, route));
      });
    }
    return app;
  }

  // A request that fails before its query (its body aborted mid-read) just loses its socket.
  // Every request is made on the second floor's prototypes (the bare routes' too, which run no
  // Express code); the first floor's Express moves its own onto its app's, as Express's own
  // server has it do.
  const server = createServer(onAppPrototypes(apps['express-on-prototypes']), (req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    const route = routes[path];
    if (!route) res.writeHead(404).end();
    else if (route.via) void apps[route.via](req, res);
    else void handle(req, res, path, route).catch(() => res.destroy());
  });
  server.keepAliveTimeout = 65_000;
  server.listen(Number(portText), '127.0.0.1');
  process.on('SIGTERM', () =>
    server.close(() => void Promise.all([...pools.values()].map((p) => p.end())).then(() => process.exit(0))),
  );
}

main();
