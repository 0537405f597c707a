import express, { type Express } from 'express';
import helmet from 'helmet';
import type { Kysely } from 'kysely';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { authenticate, cors, createObservability, createRateLimit, identify, mountHealth, requireScopeForMethod, keysRouter, type AuthConfig } from '@app/auth';
import { errorHandler, notFoundHandler, requestId } from '@app/http-errors';
import type { Config } from './config.js';
import type { Database } from './db/schema.js';
import { openapiDocument } from './openapi.js';
import { apiRoutes } from './routes/index.js';

export const SCOPES = ['tasks:read', 'tasks:write'] as const;

export interface AppDeps {
  config: Config;
  db: Kysely<Database>;
  redis: Redis | null;
  logger: Logger;
}

export function authConfig(config: Pick<Config, 'allowedOrigins'>): AuthConfig {
  return { service: 'tasks', scopes: SCOPES, allowedOrigins: config.allowedOrigins };
}

/** Builds the tasks app; it never listens by itself. */
export function createApp(deps: AppDeps): Express {
  const { config, db, redis, logger } = deps;
  const auth = authConfig(config);
  const app = express();
  app.disable('x-powered-by');
  // ETags of list bodies cost more than they save; task ETags are set explicitly (If-Match).
  app.set('etag', false);
  app.set('trust proxy', config.trustProxy);

  const observability = createObservability('tasks', logger);
  // API keys may be used from any origin (CORS allows it), so responses may be read cross-origin.
  app.use(requestId(), observability.middleware, helmet({ crossOriginResourcePolicy: { policy: 'cross-origin' } }));
  mountHealth(app, { db, redis, registry: observability.registry });
  app.get('/openapi.json', (_req, res) => {
    res.json(openapiDocument);
  });

  app.use(cors(config.allowedOrigins));
  app.use(identify(db, auth));
  app.use(createRateLimit({ name: 'api', limit: config.rateLimitPerMinute, windowMs: 60_000, redis, prefix: config.redisPrefix }));
  // Authentication and scope run before the body is parsed: a bad body from an unknown caller is
  // a 401, from a key without the scope a 403.
  const json = express.json({ limit: config.bodyLimitBytes });
  app.use('/api/v1/keys', authenticate(auth), json, keysRouter(db, auth));
  // Reads need tasks:read and writes tasks:write; the scope is checked before the body is parsed.
  app.use('/api/v1', authenticate(auth), requireScopeForMethod('tasks:read', 'tasks:write'), json, apiRoutes(deps));

  app.use(notFoundHandler());
  app.use(errorHandler({ style: 'rich', logger }));
  return app;
}
