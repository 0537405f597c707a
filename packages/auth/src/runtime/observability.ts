import type { Express, Request, RequestHandler } from 'express';
import { sql } from 'kysely';
import type { Redis } from 'ioredis';
import pino, { type Logger } from 'pino';
import { Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { AnyDb } from '../database/database.js';
import { activeTraceId } from './tracing.js';

/** JSON logs; nothing in them may carry a key, a cookie or user content. */
export function createLogger(service: string, level: string, destination?: pino.DestinationStream): Logger {
  const options = { level, base: { service }, timestamp: pino.stdTimeFunctions.isoTime };
  return destination ? pino(options, destination) : pino(options);
}

export interface Observability {
  registry: Registry;
  /** One log line and one histogram sample per request, when the response is finished. */
  middleware: RequestHandler;
}

const MATCHED = Symbol('matched route');
const TEMPLATE = Symbol('route template');
type Tracked = Request & { [MATCHED]?: unknown; [TEMPLATE]?: string };
const tracking = new WeakSet<object>();

/**
 * Remembers the route template when Express matches a route, inside its router: later (in the
 * error handler, or at 'finish') the base URL of nested routers is already restored. The
 * accessor goes once on the request prototype (Express's app.request): defining it on every
 * request turned each request object into a slow dictionary.
 */
function trackRouteTemplate(req: Request): void {
  const proto = Object.getPrototypeOf(req) as object;
  if (!tracking.has(proto)) {
    tracking.add(proto);
    Object.defineProperty(proto, 'route', {
      configurable: true,
      enumerable: true,
      get(this: Tracked) {
        return this[MATCHED];
      },
      set(this: Tracked, value: { path?: unknown } | undefined) {
        this[MATCHED] = value;
        if (value) this[TEMPLATE] = `${this.baseUrl}${String(value.path)}`;
      },
    });
  }
}

const routeTemplate = (req: Request): string => (req as Tracked)[TEMPLATE] ?? 'unmatched';

export function createObservability(service: string, logger: Logger): Observability {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry });
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request duration by route template and status',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  const middleware: RequestHandler = (req, res, next) => {
    const start = process.hrtime.bigint();
    // Read here, inside the request's context (undefined when tracing is off).
    const traceId = activeTraceId();
    trackRouteTemplate(req);
    res.once('finish', () => {
      const seconds = Number(process.hrtime.bigint() - start) / 1e9;
      const route = routeTemplate(req);
      duration.observe({ method: req.method, route, status: res.statusCode }, seconds);
      if (!logger.isLevelEnabled('info')) return;
      logger.info(
        {
          method: req.method,
          route,
          status: res.statusCode,
          ms: Math.round(seconds * 1e4) / 10,
          requestId: req.id,
          accountId: req.caller?.accountId,
          traceId,
        },
        'request',
      );
    });
    next();
  };
  return { registry, middleware };
}

/** `/healthz` (process up), `/readyz` (Postgres and Redis answer), `/metrics` (Prometheus text). */
export function mountHealth(app: Express, deps: { db: AnyDb; redis: Redis | null; registry: Registry }): void {
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    const checks: Record<string, string> = {};
    const probe = async (name: string, fn: () => Promise<unknown>) => {
      try {
        await Promise.race([
          fn(),
          new Promise((_, reject) => setTimeout(() => reject(new Error('timeout')), 2000).unref()),
        ]);
        checks[name] = 'ok';
      } catch {
        checks[name] = 'unavailable';
      }
    };
    await Promise.all([
      probe('postgres', () => sql`select 1`.execute(deps.db)),
      deps.redis
        ? probe('redis', () => deps.redis!.ping())
        : Promise.resolve((checks.redis = 'not configured (single-instance mode)')),
    ]);
    const ready = Object.values(checks).every((v) => v !== 'unavailable');
    res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'unavailable', checks });
  });
  app.get('/metrics', async (_req, res) => {
    res.type(deps.registry.contentType).send(await deps.registry.metrics());
  });
}
