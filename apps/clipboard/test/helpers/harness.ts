import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import { Redis } from 'ioredis';
import type { Kysely } from 'kysely';
import request from 'supertest';
import { runAdminCommand } from '@app/auth';
import { checkedRequest, createDatabase, dropDatabase } from '@app/devstack';
import { authConfig, createApp } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import { createDb, createPool, migrateToLatest } from '../../src/db/database.js';
import { migrations } from '../../src/db/migrations/index.js';
import type { Database } from '../../src/db/schema.js';
import { createLogger } from '../../src/observability.js';
import { openapiDocument } from '../../src/openapi.js';

export const ALLOWED_ORIGIN = 'https://app.example.test';

export interface Caller {
  accountId: string;
  /** `Authorization` header value for a key with every scope. */
  auth: string;
}

export interface TestApp {
  server: Server;
  db: Kysely<Database>;
  redis: Redis;
  config: Config;
  /** supertest bound to this app's server; every response is checked against the OpenAPI document. */
  http: () => ReturnType<typeof request>;
  /** supertest without the OpenAPI check, for undocumented paths. */
  raw: () => ReturnType<typeof request>;
  /** Runs an admin command exactly as `npm run admin` does; returns its JSON. */
  admin(...argv: string[]): Promise<Record<string, any>>;
  /** A new account and a key holding `scopes` (default: all). */
  caller(scopes?: string[]): Promise<Caller>;
  close(): Promise<void>;
}

/**
 * The clipboard app on its own fresh database (real Postgres, real migrations) and its own Redis
 * prefix, listening on an ephemeral port. `env` overrides configuration (e.g. rate limits).
 */
export async function startTestApp(env: Record<string, string> = {}): Promise<TestApp> {
  const adminUrl = process.env.TEST_DATABASE_URL!;
  const name = `clipboard_test_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  const url = await createDatabase(adminUrl, name);
  const config = loadConfig({
    DATABASE_URL: url,
    REDIS_URL: process.env.TEST_REDIS_URL,
    REDIS_PREFIX: `${name}:`,
    ALLOWED_ORIGINS: ALLOWED_ORIGIN,
    LOG_LEVEL: 'silent',
    ...env,
  });
  const db = createDb<Database>(createPool(url, 'clipboard', 10));
  await migrateToLatest(db, 'clipboard', migrations);
  const redis = new Redis(config.redisUrl!);
  // Connected before use: quitting a connection still being opened fails the test file.
  await redis.ping();
  const app = createApp({ config, db, redis, logger: createLogger('clipboard', 'silent') });
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const auth = authConfig(config);
  const admin = (...argv: string[]) => runAdminCommand(db, auth, argv) as Promise<Record<string, any>>;
  return {
    server,
    db,
    redis,
    config,
    http: checkedRequest(server, openapiDocument),
    raw: () => request(server),
    admin,
    async caller(scopes) {
      const account = await admin('create-account', '--email', `${randomUUID()}@example.test`);
      const key = await admin('create-key', '--account', account.accountId, ...(scopes ? ['--scopes', scopes.join(',')] : []));
      return { accountId: account.accountId, auth: `Bearer ${key.key}` };
    },
    async close() {
      await new Promise((resolve) => server.close(resolve));
      await db.destroy();
      await redis.quit();
      await dropDatabase(adminUrl, name);
    },
  };
}
