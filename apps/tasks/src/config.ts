import { envInt, serviceEnv } from '@app/auth/runtime';

/** The tasks service's configuration, validated once at start-up and frozen. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env) {
  return Object.freeze({
    ...serviceEnv(env, { name: 'tasks', port: 3001, bodyLimitBytes: 256 * 1024 }),
    rateLimitPerMinute: envInt(env, 'RATE_LIMIT_PER_MINUTE', 600, 1, 10_000_000),
  });
}

export type Config = ReturnType<typeof loadConfig>;
