import { runAdminCommand } from '@app/auth/identity';
import { createAppServer, createDb, createLogger, createPool, migrateToLatest } from '@app/auth/runtime';
import { stdinOf, startTestApp as start, type AppKit, type TestApp as GenericTestApp, type TestAppOptions } from '@app/devstack';
import { createApp } from '../../src/app.js';
import { authConfig } from '../../src/auth.js';
import { loadConfig, type Config } from '../../src/config.js';
import { migrations } from '../../src/db/migrations/index.js';
import type { Database } from '../../src/db/schema.js';
import { openapiDocument } from '../../src/openapi.js';

export { ALLOWED_ORIGIN } from '@app/devstack';

/** A test caller: a new account and a key. */
export interface Caller {
  accountId: string;
  /** `Authorization` header value for a key with every scope (unless scopes were named). */
  auth: string;
}

export type TestApp = Omit<GenericTestApp<Database, Config>, 'caller'> & { caller(scopes?: string[]): Promise<Caller> };

/** How the shared harness builds the meetings app: the real config, migrations, app and admin. */
const kit: AppKit<Database, Config> = {
  service: 'meetings',
  loadConfig,
  openPool: (url) => createPool(url, 'meetings', 10),
  openDb: (pool) => createDb<Database>(pool),
  migrate: (db) => migrateToLatest(db, 'meetings', migrations),
  createApp: ({ logSink, ...deps }) =>
    createApp({ ...deps, logger: logSink ? createLogger('meetings', 'info', { write: logSink }) : createLogger('meetings', 'silent') }),
  createServer: createAppServer,
  admin: (db, config, argv, stdin) => runAdminCommand(db, authConfig(config), argv, {}, stdinOf(stdin)),
  openapiDocument,
};

/**
 * The meetings app on its own fresh database (real Postgres, real migrations) and its own Redis
 * prefix, listening on an ephemeral port. `env` overrides configuration (e.g. rate limits).
 */
export function startTestApp(env: Record<string, string> = {}, options: TestAppOptions<Database, Config> = {}): Promise<TestApp> {
  // Every test talks from 127.0.0.1: the per-address network cap (180 a minute) would count a
  // whole file's requests together. The tests of the cap set it themselves.
  return start(kit, { RATE_LIMIT_NETWORK_PER_MINUTE: '1000000', ...env }, options);
}
