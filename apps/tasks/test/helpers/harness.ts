import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import { Redis } from 'ioredis';
import type { Kysely } from 'kysely';
import request from 'supertest';
import { runAdminCommand } from '@app/auth';
import { checkedRequest, createDatabase, dropDatabase } from '@app/devstack';
import { adminHooks } from '../../src/accounts.js';
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
  workspaceId: string;
  /** `Authorization` header value for a key with every scope. */
  auth: string;
}

export interface TestApp {
  server: Server;
  /** This app's database (share it with {@link StartOptions.shareWith}). */
  databaseUrl: string;
  db: Kysely<Database>;
  redis: Redis;
  config: Config;
  /** supertest bound to this app's server; every response is checked against the OpenAPI document. */
  http: () => ReturnType<typeof request>;
  /** supertest without the OpenAPI check, for undocumented paths. */
  raw: () => ReturnType<typeof request>;
  /** Runs an admin command exactly as `npm run admin` does; returns its JSON. */
  admin(...argv: string[]): Promise<Record<string, any>>;
  /** A new account with a personal workspace and a key holding `scopes` (default: all). */
  caller(scopes?: string[]): Promise<Caller>;
  close(): Promise<void>;
}

export interface StartOptions {
  /** A second instance of that app: same database and Redis prefix (closing it drops nothing). */
  shareWith?: TestApp;
  /** Run the app without Redis (single-instance mode: in-process stores). */
  withoutRedis?: boolean;
}

/**
 * The tasks app on its own fresh database (real Postgres, real migrations) and its own Redis
 * prefix, listening on an ephemeral port. `env` overrides configuration (e.g. rate limits).
 */
export async function startTestApp(env: Record<string, string> = {}, options: StartOptions = {}): Promise<TestApp> {
  const adminUrl = process.env.TEST_DATABASE_URL!;
  const shared = options.shareWith;
  const name = `tasks_test_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  const url = shared ? shared.databaseUrl : await createDatabase(adminUrl, name);
  const config = loadConfig({
    DATABASE_URL: url,
    REDIS_URL: process.env.TEST_REDIS_URL,
    REDIS_PREFIX: shared ? shared.config.redisPrefix : `${name}:`,
    ALLOWED_ORIGINS: ALLOWED_ORIGIN,
    LOG_LEVEL: 'silent',
    ...env,
  });
  const db = createDb<Database>(createPool(url, 'tasks', 10));
  await migrateToLatest(db, 'tasks', migrations);
  const redis = new Redis(config.redisUrl!);
  const app = createApp({ config, db, redis: options.withoutRedis ? null : redis, logger: createLogger('tasks', 'silent') });
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const auth = authConfig(config);
  const admin = (...argv: string[]) => runAdminCommand(db, auth, argv, adminHooks) as Promise<Record<string, any>>;
  return {
    server,
    databaseUrl: url,
    db,
    redis,
    config,
    http: checkedRequest(server, openapiDocument),
    raw: () => request(server),
    admin,
    async caller(scopes) {
      const account = await admin('create-account', '--email', `${randomUUID()}@example.test`);
      const key = await admin('create-key', '--account', account.accountId, ...(scopes ? ['--scopes', scopes.join(',')] : []));
      return { accountId: account.accountId, workspaceId: account.workspaceId, auth: `Bearer ${key.key}` };
    },
    async close() {
      await new Promise((resolve) => server.close(resolve));
      await db.destroy();
      await redis.quit();
      if (!shared) await dropDatabase(adminUrl, name);
    },
  };
}
