import type { Express } from 'express';
import type { Redis } from 'ioredis';
import type { Kysely } from 'kysely';
import type pg from 'pg';
import { runAdminCommand } from '../identity/admin.js';
import { createDb, createPool, migrateToLatest } from '../database/database.js';
import { createAppServer } from './app-server.js';
import type { ServiceDeclaration, ServiceDeps, ServiceModule } from './declaration.js';
import { serviceConfig, type ServiceConfig } from './env.js';
import { createLogger } from './observability.js';
import { authConfig } from '../identity/config.js';

/** A service's module as a harness holds it: its app builder typed by its own schema. */
type TypedModule<DB> = Omit<ServiceModule, 'createApp'> & { createApp(deps: ServiceDeps<DB>): Express };

/**
 * How long a test's pool waits to open a connection. The process's default (1.5 s) is a request's
 * bound for answering 503, which the fault suites test through real processes; on a 2-core machine
 * running every suite at once a connection has taken longer than that to open (CI: a suite's
 * migrations failed with "postgres is unavailable"), and no test here is about that bound.
 */
const TEST_CONNECT_TIMEOUT_MS = 15_000;

/**
 * How a test harness (packages/devstack's `startTestApp`) builds a service as its process does:
 * the configuration its declaration reads, the pool, the migrations, the app (silent, or logging
 * to `logSink`), the HTTP server and the admin command in process (`stdin` its standard input).
 */
export function harnessKit<DB>(service: ServiceDeclaration, module: TypedModule<DB>) {
  return {
    service: service.name,
    loadConfig: (env: Record<string, string | undefined>): ServiceConfig => serviceConfig(service, env),
    openPool: (url: string) => createPool(url, service.name, 10, { connectTimeoutMs: TEST_CONNECT_TIMEOUT_MS }),
    openDb: (pool: pg.Pool) => createDb<DB>(pool),
    migrate: (db: Kysely<DB>) => migrateToLatest(db, service.name, module.migrations),
    createApp: ({
      logSink,
      ...deps
    }: {
      config: ServiceConfig;
      db: Kysely<DB>;
      redis: Redis | null;
      logSink?: ((line: string) => void) | undefined;
    }) =>
      module.createApp({
        ...deps,
        service,
        logger: logSink ? createLogger(service.name, 'info', { write: logSink }) : createLogger(service.name, 'silent'),
      }),
    createServer: createAppServer,
    admin: (db: Kysely<DB>, config: ServiceConfig, argv: string[], stdin?: string) =>
      runAdminCommand(
        db,
        authConfig(service, config.allowedOrigins),
        argv,
        module.adminHooks,
        stdin === undefined ? undefined : { readStdin: async () => stdin },
      ),
  };
}
