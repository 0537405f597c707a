import { Redis } from 'ioredis';
import type { Logger } from 'pino';

/**
 * The service's Redis client, built to fail fast and heal quickly: while Redis is unreachable a
 * command fails at once instead of queueing (rate limits then fail open, an idempotent create
 * answers 503), a hung server fails a command after a second, and reconnection is tried every
 * half second at most, so the service is back on Redis within a second of its return. An
 * outage is one warning, its end one info line.
 */
export function createRedis(url: string, logger: Logger): Redis {
  const redis = new Redis(url, {
    enableOfflineQueue: false,
    // Commands issued in one tick (many requests' rate-limit checks, say) go out in one write.
    enableAutoPipelining: true,
    maxRetriesPerRequest: 1,
    commandTimeout: 1000,
    connectTimeout: 2000,
    retryStrategy: (times) => Math.min(times * 100, 500),
  });
  let down = false;
  redis.on('error', (err: Error) => {
    if (down) return;
    down = true;
    logger.warn(
      { err: err.message },
      'redis unavailable: rate limits fail open and idempotent creates answer 503 until it is back',
    );
  });
  redis.on('ready', () => {
    if (!down) return;
    down = false;
    logger.info('redis is back');
  });
  return redis;
}

/** Waits until the client is connected, or `timeoutMs` passes (then the service starts without it). */
export function redisReady(redis: Redis, timeoutMs: number): Promise<boolean> {
  if (redis.status === 'ready') return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      redis.off('ready', onReady);
      resolve(false);
    }, timeoutMs);
    const onReady = () => {
      clearTimeout(timer);
      resolve(true);
    };
    redis.once('ready', onReady);
  });
}
