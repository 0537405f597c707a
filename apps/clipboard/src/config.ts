import { isValidTimezone } from '@app/auth';

/** A configuration problem: the process prints this one line and exits. */
export class ConfigError extends Error {}

type Env = NodeJS.ProcessEnv;

function int(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  return n;
}

function url(env: Env, name: string, protocols: string[], required: boolean): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') {
    if (required) throw new ConfigError(`${name} is required (for example ${protocols[0]}//host:port/...)`);
    return undefined;
  }
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(`${name} is not a valid URL`);
  }
  if (!protocols.includes(parsed.protocol)) throw new ConfigError(`${name} must use ${protocols.join(' or ')}`);
  return raw;
}

function oneOf<T extends string>(env: Env, name: string, values: readonly T[], fallback: T): T {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!values.includes(raw as T)) throw new ConfigError(`${name} must be one of ${values.join(', ')}, got "${raw}"`);
  return raw as T;
}

function origins(env: Env, name: string): string[] {
  const list = (env[name] ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  for (const origin of list) {
    let parsed: URL | undefined;
    try {
      parsed = new URL(origin);
    } catch {
      parsed = undefined;
    }
    if (!parsed || parsed.origin !== origin) throw new ConfigError(`${name} must list origins like https://app.example.com, got "${origin}"`);
  }
  return list;
}

/** `TRUST_PROXY`: a hop count, true/false, or Express's address and subnet names. */
function trustProxy(env: Env): boolean | number | string {
  const raw = (env.TRUST_PROXY ?? 'loopback').trim();
  if (raw === 'true') return true;
  if (raw === 'false') return false;
  if (/^\d+$/.test(raw)) return Number(raw);
  if (!/^[\w.:/, -]+$/.test(raw)) throw new ConfigError(`TRUST_PROXY must be a hop count, true/false, or addresses/subnets, got "${raw}"`);
  return raw;
}

/** The service's configuration, validated once at start-up and frozen. */
export function loadConfig(env: Env = process.env) {
  const defaultTimezone = env.DEFAULT_TIMEZONE ?? 'UTC';
  if (!isValidTimezone(defaultTimezone)) throw new ConfigError(`DEFAULT_TIMEZONE must be an IANA time zone, got "${defaultTimezone}"`);
  return Object.freeze({
    port: int(env, 'CLIPBOARD_PORT', int(env, 'PORT', 3003, 0, 65535), 0, 65535),
    host: env.HOST || '0.0.0.0',
    databaseUrl: url(env, 'DATABASE_URL', ['postgres:', 'postgresql:'], true)!,
    databasePoolSize: int(env, 'DATABASE_POOL_SIZE', 10, 1, 200),
    redisUrl: url(env, 'REDIS_URL', ['redis:', 'rediss:'], false),
    redisPrefix: env.REDIS_PREFIX || 'clipboard:',
    allowedOrigins: origins(env, 'ALLOWED_ORIGINS'),
    trustProxy: trustProxy(env),
    rateLimitPerMinute: int(env, 'RATE_LIMIT_PER_MINUTE', 300, 1, 10_000_000),
    bodyLimitBytes: int(env, 'BODY_LIMIT_BYTES', 1024 * 1024, 1024, 50 * 1024 * 1024),
    logLevel: oneOf(env, 'LOG_LEVEL', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const, 'info'),
    shutdownTimeoutMs: int(env, 'SHUTDOWN_TIMEOUT_MS', 10_000, 0, 600_000),
  });
}

export type Config = ReturnType<typeof loadConfig>;
