import { runAdminCommand } from '@app/auth/identity';
import {
  authConfig,
  createAppServer,
  createDb,
  createLogger,
  createPool,
  migrateToLatest,
  serviceConfig,
  type ServiceConfig,
} from '@app/auth/runtime';
import {
  stdinOf,
  startTestApp as start,
  type AppKit,
  type TestApp as GenericTestApp,
  type TestAppOptions,
} from '@app/devstack';
import { createApp, migrations } from '../../src/app.js';
import type { Database } from '../../src/db/schema.js';
import { openapiDocument } from '../../src/openapi.js';
import service from '../../src/service.js';

export { ALLOWED_ORIGIN } from '@app/devstack';

/** A test caller: a new account and a key. */
export interface Caller {
  accountId: string;
  /** `Authorization` header value for a key with every scope (unless scopes were named). */
  auth: string;
}

export type TestApp = Omit<GenericTestApp<Database, ServiceConfig>, 'caller'> & {
  caller(scopes?: string[]): Promise<Caller>;
};

/** How the shared harness builds the __name__ app from its declaration: the real config, migrations, app and admin. */
const kit: AppKit<Database, ServiceConfig> = {
  service: service.name,
  loadConfig: (env) => serviceConfig(service, env),
  openPool: (url) => createPool(url, service.name, 10),
  openDb: (pool) => createDb<Database>(pool),
  migrate: (db) => migrateToLatest(db, service.name, migrations),
  createApp: ({ logSink, ...deps }) =>
    createApp({
      ...deps,
      service,
      logger: logSink ? createLogger(service.name, 'info', { write: logSink }) : createLogger(service.name, 'silent'),
    }),
  createServer: createAppServer,
  admin: (db, config, argv, stdin) =>
    runAdminCommand(db, authConfig(service, config.allowedOrigins), argv, {}, stdinOf(stdin)),
  openapiDocument,
};

/**
 * The __name__ app on its own fresh database (real Postgres, real migrations) and its own Redis
 * prefix, listening on an ephemeral port. `env` overrides configuration (e.g. rate limits).
 */
export function startTestApp(
  env: Record<string, string> = {},
  options: TestAppOptions<Database, ServiceConfig> = {},
): Promise<TestApp> {
  // The tests make more requests a minute than the default limit lets one account make.
  return start(kit, { RATE_LIMIT_PER_MINUTE: '100000', ...env }, options);
}

/** A new __resource__ of `c`'s, as the API answers it. */
export async function create__Resource__(
  t: TestApp,
  c: Caller,
  title = 'A __resource__',
): Promise<Record<string, any>> {
  return (
    await t
      .http()
      .post('/api/__name__')
      .set('Authorization', c.auth)
      .send({ title, url: 'https://example.com/' })
      .expect(201)
  ).body;
}
