import type { Server } from 'node:http';
import { setFlagsFromString } from 'node:v8';
import type { Redis } from 'ioredis';
import type { Migration } from 'kysely';
import type { Logger } from 'pino';
import { DependencyUnavailableError } from '@app/http-errors';
import type { ServiceDeclaration, ServiceModule } from './declaration.js';
import { ConfigError, serviceConfig, type ServiceConfig } from './env.js';
import {
  createDb,
  createPool,
  migrateToLatest,
  pendingMigrations,
  type AnyDb,
  type AnySchema,
} from '../database/database.js';
import { createAppServer } from './app-server.js';
import { fail } from './fail.js';
import { createLogger } from './observability.js';
import { createRedis, redisReady } from './redis.js';
import { flushTracing } from './tracing.js';
import { streamHubOf, webhookWorkerOf } from './service-app.js';

/**
 * The service process: configuration (a bad value stops it with one line), database and schema
 * migrations, Redis (or in-process stores), the app on its port, and an ordered shutdown on
 * SIGTERM/SIGINT: stop accepting, drain in-flight requests, close the pools, exit 0; whatever is
 * still running at SHUTDOWN_TIMEOUT_MS is cut off and the process exits 1.
 */
async function startService(service: ServiceDeclaration, module: ServiceModule): Promise<void> {
  const { name } = service;
  const { migrations } = module;
  let config: ServiceConfig;
  try {
    config = serviceConfig(service, process.env);
  } catch (err) {
    if (err instanceof ConfigError) fail(`${name}: configuration error`, err);
    throw err;
  }
  const logger = createLogger(name, config.logLevel);
  // V8 reads the flag each time a full collection sets the heap's next limit, so it applies from here on.
  if (config.heapGrowingPercent > 0) setFlagsFromString(`--heap-growing-percent=${config.heapGrowingPercent}`);
  // A bug that leaves a promise unhandled fails its request, not the process (and every other
  // request with it); it is logged in full to be fixed.
  process.on('unhandledRejection', (reason) => {
    logger.error(
      { err: reason instanceof Error ? { message: reason.message, stack: reason.stack } : String(reason) },
      'unhandled promise rejection',
    );
  });
  const pool = createPool(config.databaseUrl, name, config.databasePoolSize, {
    connectTimeoutMs: config.databaseConnectTimeoutMs,
    statementTimeoutMs: config.databaseStatementTimeoutMs,
    idleTimeoutMs: config.databasePoolIdleMs,
    onConnectionError: (err) => logger.warn({ err: err.message }, 'database connection lost'),
  });
  const db = createDb<AnySchema>(pool);
  if (config.migrateOnStart) await untilPostgresAnswers(() => migrateToLatest(db, name, migrations), logger);
  else await schemaMigrated(db, name, migrations, logger);

  let redis: Redis | null = null;
  if (config.redisUrl) {
    redis = createRedis(config.redisUrl, logger);
    if (!(await redisReady(redis, 2000))) logger.warn('starting without Redis; it is used as soon as it answers');
  } else {
    logger.warn('REDIS_URL is not set: rate limits are kept in this process (single-instance mode)');
  }

  const app = module.createApp({ service, config, db, redis, logger });
  const server: Server = createAppServer(app).listen(config.port, config.host, () => {
    logger.info({ port: config.port }, `${name} listening`);
  });
  // Deliveries start once the process serves; a failure to start them (Postgres down) is retried.
  const worker = webhookWorkerOf(app);
  const startWorker = (delayMs: number): void => {
    worker?.start().catch((err: unknown) => {
      logger.warn({ err: messageOf(err) }, 'webhook worker failed to start; retrying');
      setTimeout(() => startWorker(Math.min(delayMs * 2, 30_000)), delayMs).unref();
    });
  };
  startWorker(1000);
  // Longer than the gateway's upstream keepalive (60 s), so nginx never reuses a closed socket.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;

  let stopping = false;
  // While draining, every answer closes its connection: the gateway keeps its upstream
  // connections alive and busy, so without this they would never fall idle and the drain would
  // last until the deadline. A request already sent on one still gets its answer.
  server.prependListener('request', (_req, res) => {
    if (stopping) res.setHeader('Connection', 'close');
  });
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: draining in-flight requests');
    // The deadline is the deadline: a query still running (up to the statement timeout) would
    // otherwise hold the pool's close, and the process with it.
    const force = setTimeout(() => {
      logger.error('shutdown deadline passed; closing remaining connections and exiting');
      server.closeAllConnections();
      setImmediate(() => process.exit(1));
    }, config.shutdownTimeoutMs);
    force.unref();
    // Streams never end by themselves: each is told to reconnect (elsewhere) and closed first.
    const streams = streamHubOf(app)?.close();
    // Each step swallows its own error, so the closing chain cannot reject.
    server.close(() => {
      void (async () => {
        await worker?.stop().catch(() => {});
        await streams;
        await db.destroy().catch(() => {});
        await redis?.quit().catch(() => {});
        await flushTracing();
        logger.info('stopped');
        process.exit(0);
      })();
    });
    // A keep-alive connection whose request was in flight when the drain began goes idle only
    // after its answer (which went out without Connection: close); close each as soon as it does.
    setInterval(() => server.closeIdleConnections(), 100).unref();
    server.closeIdleConnections();
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

/**
 * With MIGRATE_ON_START=0 (k8s, where a Job runs `admin migrate` before the rollout) the process
 * waits, without serving, until no migration it knows of is pending: it never runs code against
 * a schema older than that code, and never changes the schema itself. Its startupProbe bounds the wait.
 */
async function schemaMigrated(
  db: AnyDb,
  name: string,
  migrations: Record<string, Migration>,
  logger: Logger,
): Promise<void> {
  for (let logged = false; ; logged = true) {
    const pending = await pendingMigrations(db, name, migrations).catch((err: unknown) => [
      `(the schema cannot be read: ${messageOf(err)})`,
    ]);
    if (pending.length === 0) return;
    if (!logged)
      logger.warn({ pending }, 'MIGRATE_ON_START=0: waiting for `admin migrate` to apply the pending migrations');
    await new Promise((resolve) => setTimeout(resolve, 2000));
  }
}

/**
 * Runs `step` again while Postgres cannot be reached (refused, starting up, or no connection within
 * DATABASE_CONNECT_TIMEOUT_MS, as on a loaded machine), backing off from 0.5 s to 5 s with one
 * warning: a service started before its database, or beside a busy one, waits for it instead of
 * exiting. A refused password or a database that does not exist cannot pass by waiting: it fails.
 */
async function untilPostgresAnswers(step: () => Promise<void>, logger: Logger): Promise<void> {
  for (let delayMs = 500, warned = false; ; delayMs = Math.min(delayMs * 2, 5000)) {
    try {
      return await step();
    } catch (err) {
      if (!(err instanceof DependencyUnavailableError)) throw err;
      // Its own message ("password authentication failed ..."), not "postgres is unavailable".
      if (isMisconfiguration(err.cause)) throw err.cause;
      if (!warned) logger.warn({ err: messageOf(err.cause) }, 'postgres is unavailable: waiting for it to migrate');
      warned = true;
      await new Promise((resolve) => setTimeout(resolve, delayMs));
    }
  }
}

/** SQLSTATE class 28 (invalid authorization) or 3D000 (no such database): an operator's to fix. */
function isMisconfiguration(cause: unknown): boolean {
  const code = (cause as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && (code.startsWith('28') || code === '3D000');
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Runs {@link startService}; a failure to start is one line on stderr and exit 1. */
export function runService(service: ServiceDeclaration, module: ServiceModule): void {
  startService(service, module).catch((err: unknown) => fail(`${service.name}: failed to start`, err));
}
