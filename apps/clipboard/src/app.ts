import express, { type Express } from 'express';
import helmet from 'helmet';
import type { Kysely } from 'kysely';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { authenticate, cors, createObservability, createRateLimit, identify, mountHealth, keysRouter, type AuthConfig } from '@app/auth';
import { errorHandler, notFoundHandler, requestId } from '@app/http-errors';
import type { Config } from './config.js';
import type { Database } from './db/schema.js';
import { openapiDocument } from './openapi.js';
import { apiRoutes } from './routes/index.js';

export const SCOPES = ['clipboard:read', 'clipboard:write', 'snippets:read', 'snippets:write', 'settings:read', 'settings:write'] as const;

export interface AppDeps {
  config: Config;
  db: Kysely<Database>;
  redis: Redis | null;
  logger: Logger;
}

export function authConfig(config: Pick<Config, 'allowedOrigins'>): AuthConfig {
  return { service: 'clipboard', scopes: SCOPES, allowedOrigins: config.allowedOrigins };
}

/** Builds the clipboard app; it never listens by itself. */
export function createApp(deps: AppDeps): Express {
  const { config, db, redis, logger } = deps;
  const auth = authConfig(config);
  const app = express();
  app.disable('x-powered-by');
  // ETags of list bodies cost more than they save.
  app.set('etag', false);
  app.set('trust proxy', config.trustProxy);

  const observability = createObservability('clipboard', logger);
  // API keys may be used from any origin (CORS allows it), so responses may be read cross-origin.
  app.use(requestId(), observability.middleware, helmet({ crossOriginResourcePolicy: { policy: 'cross-origin' } }));
  mountHealth(app, { db, redis, registry: observability.registry });
  app.get('/openapi.json', (_req, res) => {
    res.json(openapiDocument);
  });

  app.use(cors(config.allowedOrigins));
  app.use(identify(db, auth));
  app.use(createRateLimit({ name: 'api', limit: config.rateLimitPerMinute, windowMs: 60_000, redis, prefix: config.redisPrefix }));
  // Authentication runs before the body is parsed: a bad body from an unknown caller is a 401.
  // The /api routes parse their bodies after their scope check (403 before 400).
  app.use('/api/settings/keys', authenticate(auth), express.json({ limit: config.bodyLimitBytes }), keysRouter(db, auth));
  app.use('/api', authenticate(auth), apiRoutes(deps));

  app.use(notFoundHandler());
  app.use(errorHandler({ style: 'simple', logger }));
  return app;
}
