import express, { type Express } from 'express';
import helmet from 'helmet';
import type { Kysely } from 'kysely';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { authenticate, cors, createObservability, createRateLimit, identify, mountHealth, requireScopeForMethod, isRead, keysRouter, type AuthConfig } from '@app/auth';
import { errorHandler, notFoundHandler, requestId } from '@app/http-errors';
import type { Config } from './config.js';
import type { Database } from './db/schema.js';
import { openapiDocument } from './openapi.js';
import { apiRoutes } from './routes/index.js';

export const SCOPES = ['meetings:read', 'meetings:write'] as const;

export interface AppDeps {
  config: Config;
  db: Kysely<Database>;
  redis: Redis | null;
  logger: Logger;
}

export function authConfig(config: Pick<Config, 'allowedOrigins'>): AuthConfig {
  return { service: 'meetings', scopes: SCOPES, allowedOrigins: config.allowedOrigins };
}

/** Builds the meetings app; it never listens by itself. */
export function createApp(deps: AppDeps): Express {
  const { config, db, redis, logger } = deps;
  const auth = authConfig(config);
  const app = express();
  app.disable('x-powered-by');
  // ETags of list bodies cost more than they save.
  app.set('etag', false);
  app.set('trust proxy', config.trustProxy);

  const observability = createObservability('meetings', logger);
  // API keys may be used from any origin (CORS allows it), so responses may be read cross-origin.
  app.use(requestId(), observability.middleware, helmet({ crossOriginResourcePolicy: { policy: 'cross-origin' } }));
  mountHealth(app, { db, redis, registry: observability.registry });
  app.get('/openapi.json', (_req, res) => {
    res.json(openapiDocument);
  });

  app.use(cors(config.allowedOrigins));
  app.use(identify(db, auth));
  // Reads and writes are counted separately, as the spec says.
  app.use(createRateLimit({ name: 'reads', limit: config.rateLimitReadsPerMinute, windowMs: 60_000, redis, prefix: config.redisPrefix, applies: isRead }));
  app.use(createRateLimit({ name: 'writes', limit: config.rateLimitWritesPerMinute, windowMs: 60_000, redis, prefix: config.redisPrefix, applies: (m) => !isRead(m) }));
  // Authentication and scope run before the body is parsed: a bad body from an unknown caller is
  // a 401, from a key without the scope a 403.
  const json = express.json({ limit: config.bodyLimitBytes });
  app.use('/api/me/keys', authenticate(auth), json, keysRouter(db, auth));
  // Reads need meetings:read and writes meetings:write; the scope is checked before the body is parsed.
  app.use('/api', authenticate(auth), requireScopeForMethod('meetings:read', 'meetings:write'), json, apiRoutes(deps));

  app.use(notFoundHandler());
  app.use(errorHandler({ style: 'rich', logger }));
  return app;
}
