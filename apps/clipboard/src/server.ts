import type { Server } from 'node:http';
import { Redis } from 'ioredis';
import { createApp } from './app.js';
import { ConfigError, loadConfig } from './config.js';
import { createDb, createPool, migrateToLatest } from './db/database.js';
import { migrations } from './db/migrations/index.js';
import type { Database } from './db/schema.js';
import { createLogger } from './observability.js';

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`clipboard: configuration error: ${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
  const logger = createLogger('clipboard', config.logLevel);
  const pool = createPool(config.databaseUrl, 'clipboard', config.databasePoolSize, (err) =>
    logger.warn({ err: err.message }, 'idle database connection lost'),
  );
  const db = createDb<Database>(pool);
  await migrateToLatest(db, 'clipboard', migrations);

  let redis: Redis | null = null;
  if (config.redisUrl) {
    redis = new Redis(config.redisUrl, { maxRetriesPerRequest: 2, enableOfflineQueue: true, lazyConnect: false });
    redis.on('error', (err) => logger.warn({ err: err.message }, 'redis error'));
  } else {
    logger.warn('REDIS_URL is not set: rate limits are kept in this process (single-instance mode)');
  }

  const app = createApp({ config, db, redis, logger });
  const server: Server = app.listen(config.port, config.host, () => {
    logger.info({ port: config.port }, 'clipboard listening');
  });
  // Longer than the gateway's upstream keepalive (60 s), so nginx never reuses a closed socket.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;

  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: draining in-flight requests');
    const force = setTimeout(() => {
      logger.error('shutdown deadline passed; closing remaining connections');
      server.closeAllConnections();
    }, config.shutdownTimeoutMs);
    force.unref();
    server.close(async () => {
      await db.destroy().catch(() => {});
      await redis?.quit().catch(() => {});
      logger.info('stopped');
      process.exit(0);
    });
    server.closeIdleConnections();
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

main().catch((err: unknown) => {
  process.stderr.write(`clipboard: failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
