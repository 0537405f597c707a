import { envInt, serviceEnv } from '@app/auth/runtime';

/** The meetings service's configuration, validated once at start-up and frozen. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env) {
  return Object.freeze({
    // The spec's 128 KB request body limit.
    ...serviceEnv(env, { name: 'meetings', port: 3002, bodyLimitBytes: 128 * 1024 }),
    // The spec's numbers: 120 authenticated reads and 120 writes per account per minute.
    rateLimitReadsPerMinute: envInt(env, 'RATE_LIMIT_READS_PER_MINUTE', 120, 1, 10_000_000),
    rateLimitWritesPerMinute: envInt(env, 'RATE_LIMIT_WRITES_PER_MINUTE', 120, 1, 10_000_000),
    // The spec's network-level cap: 180 API requests per minute per client address.
    rateLimitNetworkPerMinute: envInt(env, 'RATE_LIMIT_NETWORK_PER_MINUTE', 180, 1, 10_000_000),
  });
}

export type Config = ReturnType<typeof loadConfig>;
