import { envInt, serviceEnv } from '@app/auth/runtime';

/** The clipboard service's configuration, validated once at start-up and frozen. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env) {
  return Object.freeze({
    ...serviceEnv(env, { name: 'clipboard', port: 3003, bodyLimitBytes: 1024 * 1024 }),
    rateLimitPerMinute: envInt(env, 'RATE_LIMIT_PER_MINUTE', 300, 1, 10_000_000),
  });
}

export type Config = ReturnType<typeof loadConfig>;
