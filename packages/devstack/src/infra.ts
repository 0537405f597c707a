import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmbeddedPostgres } from './postgres.js';
import { startRedis } from './processes.js';
import { freePort } from './ports.js';

export interface TestInfra {
  databaseUrl: string;
  redisUrl: string;
  stop(): Promise<void>;
}

/**
 * Real Postgres and Redis for a test run: DATABASE_URL / REDIS_URL when set, else a throwaway
 * embedded Postgres and a `redis-server` from PATH, stopped by `stop()`.
 */
export async function ensureTestInfra(env: NodeJS.ProcessEnv = process.env): Promise<TestInfra> {
  const stops: Array<() => Promise<void>> = [];
  let databaseUrl = env.DATABASE_URL;
  if (!databaseUrl) {
    const dataDir = mkdtempSync(join(tmpdir(), 'pg-test-'));
    const pg = await startEmbeddedPostgres({
      dataDir,
      port: await freePort(),
      persistent: false,
      // Throwaway data: durability only costs test time.
      settings: { fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off' },
    });
    stops.push(async () => {
      await pg.stop();
      rmSync(dataDir, { recursive: true, force: true });
    });
    databaseUrl = pg.url;
  }
  let redisUrl = env.REDIS_URL;
  if (!redisUrl) {
    const redis = await startRedis();
    stops.push(() => redis.stop());
    redisUrl = redis.url;
  }
  return {
    databaseUrl,
    redisUrl,
    stop: async () => {
      for (const stop of stops.reverse()) await stop();
    },
  };
}
