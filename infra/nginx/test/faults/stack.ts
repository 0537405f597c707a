import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  adminCommand,
  freePort,
  startEmbeddedPostgres,
  startProduct,
  startRedis,
  type ProductOptions,
  type RunningPostgres,
  type RunningProduct,
  type RunningRedis,
} from '@app/devstack';

/** A fault suite's product, on a Postgres and a redis-server of its own (which the suite may stop). */
export interface FaultStack {
  pgServer: RunningPostgres;
  redis: RunningRedis;
  product: RunningProduct;
  gateway: string;
  /** `npm run admin -- tasks ...` against the suite's Postgres. */
  admin: (...argv: string[]) => Promise<any>;
  stop(): Promise<void>;
}

/**
 * Postgres, Redis and the product behind nginx with `options` (replicas, roles, supervision); the
 * meetings guard lifted so load is never refused by it.
 */
export async function startFaultStack(
  options: Pick<ProductOptions, 'replicas' | 'env' | 'serviceEnv' | 'supervise'>,
): Promise<FaultStack> {
  const pgDir = mkdtempSync(join(tmpdir(), 'hooks-pg-'));
  const pgServer = await startEmbeddedPostgres({
    dataDir: pgDir,
    port: await freePort(),
    persistent: false,
    settings: { fsync: 'off', full_page_writes: 'off' },
  });
  const redis = await startRedis();
  const nginxDir = mkdtempSync(join(tmpdir(), 'hooks-gateway-'));
  const product = await startProduct({
    databaseUrl: pgServer.url,
    redisUrl: redis.url,
    nginxDir,
    gatewayVars: { MEETINGS_GUARD_RATE: '1000000r/s', MEETINGS_GUARD_BURST: 1000000 },
    ...options,
  });
  if (!product.gateway) throw new Error('nginx is not installed: apt-get install -y nginx-light');
  return {
    pgServer,
    redis,
    product,
    gateway: product.gateway,
    admin: (...argv) => adminCommand('tasks', pgServer.url, ...argv),
    async stop() {
      await product.stop();
      await redis.stop();
      await pgServer.stop();
      rmSync(pgDir, { recursive: true, force: true });
      rmSync(nginxDir, { recursive: true, force: true });
    },
  };
}
