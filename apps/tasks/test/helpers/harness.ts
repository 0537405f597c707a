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
import { createApp, migrations, adminHooks } from '../../src/app.js';
import type { Database } from '../../src/db/schema.js';
import { openapiDocument } from '../../src/openapi.js';
import service from '../../src/service.js';

export { ALLOWED_ORIGIN } from '@app/devstack';

/** A test caller: a new account (with its personal workspace) and a key. */
export interface Caller {
  accountId: string;
  workspaceId: string;
  /** `Authorization` header value for a key with every scope (unless scopes were named). */
  auth: string;
}

export type TestApp = Omit<GenericTestApp<Database, ServiceConfig>, 'caller'> & {
  caller(scopes?: string[]): Promise<Caller>;
};

/** The configuration the tasks process reads from `env`, by its declaration. */
export const loadConfig = (env: Record<string, string | undefined>): ServiceConfig => serviceConfig(service, env);

/** How the shared harness builds the tasks app from its declaration: the real config, migrations, app and admin. */
const kit: AppKit<Database, ServiceConfig> = {
  service: service.name,
  loadConfig,
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
    runAdminCommand(db, authConfig(service, config.allowedOrigins), argv, adminHooks, stdinOf(stdin)),
  openapiDocument,
};

/**
 * The tasks app on its own fresh database (real Postgres, real migrations) and its own Redis
 * prefix, listening on an ephemeral port. `env` overrides configuration (e.g. rate limits).
 */
export function startTestApp(
  env: Record<string, string> = {},
  options: TestAppOptions<Database, ServiceConfig> = {},
): Promise<TestApp> {
  return start(kit, env, options) as Promise<TestApp>;
}
