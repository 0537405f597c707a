import { createHash } from 'node:crypto';
import { secretKey, type SecretKey, type SecretKeys } from '../webhooks/secret-box.js';

/** A configuration problem: the process prints this one line and exits. */
export class ConfigError extends Error {}

type Env = NodeJS.ProcessEnv;

/** An integer variable within [min, max]; `fallback` when unset or empty. */
function envInt(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  return n;
}

/** A URL variable with one of `protocols`; undefined when unset and not `required`. */
function envUrl(env: Env, name: string, protocols: string[], required: boolean): string | undefined {
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

/** One of `values`; `fallback` when unset or empty. */
function envOneOf<T extends string>(env: Env, name: string, values: readonly T[], fallback: T): T {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!values.includes(raw as T)) throw new ConfigError(`${name} must be one of ${values.join(', ')}, got "${raw}"`);
  return raw as T;
}

/** A comma-separated list of origins (scheme://host[:port], nothing more). */
/** A comma-separated list of absolute http(s) URLs, each kept as written. */
function envUrls(env: Env, name: string): string[] {
  const list = (env[name] ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const url of list) {
    if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol))
      throw new ConfigError(`${name} must list http(s) URLs, got "${url}"`);
  }
  return list;
}

function envOrigins(env: Env, name: string): string[] {
  const list = (env[name] ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const origin of list) {
    let parsed: URL | undefined;
    try {
      parsed = new URL(origin);
    } catch {
      parsed = undefined;
    }
    if (!parsed || parsed.origin !== origin)
      throw new ConfigError(`${name} must list origins like https://app.example.com, got "${origin}"`);
  }
  return list;
}

/** `TRUST_PROXY`: a hop count, true/false, or Express's address and subnet names (default loopback). */
function trustProxy(env: Env): boolean | number | string {
  const raw = (env.TRUST_PROXY ?? 'loopback').trim();
  if (raw === 'true') return true;
  if (raw === 'false') return false;
  if (/^\d+$/.test(raw)) return Number(raw);
  if (!/^[\w.:/, -]+$/.test(raw))
    throw new ConfigError(`TRUST_PROXY must be a hop count, true/false, or addresses/subnets, got "${raw}"`);
  return raw;
}

/** `PUBLIC_URL`: an origin (scheme://host[:port]) without a path; undefined when unset. */
function publicUrl(env: Env): string | undefined {
  const raw = envUrl(env, 'PUBLIC_URL', ['http:', 'https:'], false);
  if (raw === undefined) return undefined;
  const origin = new URL(raw).origin;
  if (raw.replace(/\/$/, '') !== origin)
    throw new ConfigError(`PUBLIC_URL must be an origin like https://api.example.com, got "${raw}"`);
  return origin;
}

/**
 * The key of `npm start` and the tests when WEBHOOK_SECRET_KEY is unset: fixed, so a restart
 * still reads its rows, and public, so it is refused where NODE_ENV=production (the images).
 */
const DEVELOPMENT_KEY = createHash('sha256').update('webhook secret key for development only').digest();

/** One key: 32 bytes as base64 (standard or URL-safe, padded or not) or as 64 hex digits. */
function parseSecretKey(name: string, raw: string): SecretKey {
  const text = raw.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(text)
    ? Buffer.from(text, 'hex')
    : /^[A-Za-z0-9+/_-]{43}=?$/.test(text)
      ? Buffer.from(text, 'base64')
      : undefined;
  if (key?.length !== 32)
    throw new ConfigError(`${name} must be 32 random bytes as base64 or 64 hex digits (openssl rand -base64 32)`);
  // A random key has about 28 distinct byte values; a typed or patterned one has few.
  if (new Set(key).size < 16)
    throw new ConfigError(`${name} is not random enough: make one with openssl rand -base64 32`);
  return secretKey(key);
}

/**
 * `WEBHOOK_SECRET_KEY` (encrypts the webhook signing secrets at rest, and decrypts) and
 * `WEBHOOK_SECRET_KEYS_OLD` (a comma-separated list that only decrypts: the keys a rotation
 * replaced, until `webhooks reencrypt` has run). Unset, the development key, except in production.
 */
export function webhookSecretKeys(env: Env): SecretKeys {
  const production = env.NODE_ENV === 'production';
  const raw = env.WEBHOOK_SECRET_KEY?.trim();
  let current: SecretKey;
  if (raw) {
    current = parseSecretKey('WEBHOOK_SECRET_KEY', raw);
    if (production && current.key.equals(DEVELOPMENT_KEY))
      throw new ConfigError('WEBHOOK_SECRET_KEY is the public development key, refused with NODE_ENV=production');
  } else if (production) {
    throw new ConfigError(
      'WEBHOOK_SECRET_KEY is required with NODE_ENV=production (32 random bytes, base64: openssl rand -base64 32)',
    );
  } else {
    current = secretKey(DEVELOPMENT_KEY);
  }
  const old = (env.WEBHOOK_SECRET_KEYS_OLD ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((k, i) => parseSecretKey(`WEBHOOK_SECRET_KEYS_OLD (entry ${i + 1})`, k));
  return { current, old: old.filter((k) => k.id !== current.id) };
}

/** A secret of at least 32 characters; undefined when unset. */
function secret(env: Env, name: string): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  if (raw.length < 32) throw new ConfigError(`${name} must be at least 32 characters`);
  return raw;
}

/**
 * What `npm start` and the tests sign MCP session ids with when MCP_SESSION_SECRET is unset:
 * fixed and public (never derived from DATABASE_URL, which compose files and manifests show),
 * so it is refused where NODE_ENV=production.
 */
const DEVELOPMENT_MCP_SESSION_SECRET = 'mcp session secret for development only: never in production';

/**
 * `MCP_SESSION_SECRET`, what MCP session ids are signed with (the same on every replica). With
 * NODE_ENV=production a process that serves HTTP needs its own; a worker serves no MCP.
 */
function mcpSessionSecret(env: Env, role: 'api' | 'worker' | 'all'): string {
  const production = env.NODE_ENV === 'production';
  const raw = secret(env, 'MCP_SESSION_SECRET');
  if (raw === undefined) {
    if (production && role !== 'worker') {
      throw new ConfigError(
        'MCP_SESSION_SECRET is required with NODE_ENV=production (32+ random characters, the same on every replica: openssl rand -base64 32)',
      );
    }
    return DEVELOPMENT_MCP_SESSION_SECRET;
  }
  if (production && raw === DEVELOPMENT_MCP_SESSION_SECRET)
    throw new ConfigError('MCP_SESSION_SECRET is the public development secret, refused with NODE_ENV=production');
  return raw;
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/**
 * The settings every service reads the same way: `<SERVICE>_PORT` (or `PORT`), `HOST`,
 * `DATABASE_URL`, `DATABASE_POOL_SIZE`, `DATABASE_CONNECT_TIMEOUT_MS`, `DATABASE_STATEMENT_TIMEOUT_MS`, `DATABASE_POOL_IDLE_MS`, `REDIS_URL`, `REDIS_PREFIX`, `ALLOWED_ORIGINS`,
 * `TRUST_PROXY`, `BODY_LIMIT_BYTES`, `LOG_LEVEL`, `SHUTDOWN_TIMEOUT_MS`, `HEAP_GROWING_PERCENT`, `COOKIE_SECURE`, `WEBHOOK_RETRY_BASE_MS`, `WEBHOOK_ALLOW_PRIVATE`, `WEBHOOK_CONCURRENCY`, `WEBHOOK_TRACE_CONTEXT`, `WEBHOOK_SECRET_KEY`, `WEBHOOK_SECRET_KEYS_OLD`, `MIGRATE_ON_START`, `OAUTH_CIMD_ALLOW_PRIVATE`, `OAUTH_REGISTRATIONS_PER_HOUR`, `SIGNUP` (`open` lets anyone create
 * an account at `/auth/<service>/signup`; `closed`, the default, leaves it to the operator),
 * `MCP_CONFIRMATION_SECONDS`, `MCP_SESSION_SECRET` (required with NODE_ENV=production, as `WEBHOOK_SECRET_KEY` is), `PUBLIC_URL` (the origin clients use, e.g. https://api.example.com, named in the OAuth and MCP
 * metadata; unset: the origin each request came through).
 */
function serviceEnv(env: Env, service: { name: string; port: number; bodyLimitBytes: number }) {
  // Written out, so the services' inferred config types name nothing outside this package's entry points.
  const secretKeys: { current: { id: string; key: Buffer }; old: ReadonlyArray<{ id: string; key: Buffer }> } =
    webhookSecretKeys(env);
  // `api`: HTTP only (events are written to the outbox, never delivered here); `worker`: webhook
  // delivery, serving only /healthz, /readyz and /metrics; `all` (npm start): both in one process.
  const serviceRole = envOneOf(env, 'SERVICE_ROLE', ['api', 'worker', 'all'] as const, 'all');
  return {
    port: envInt(env, `${service.name.toUpperCase()}_PORT`, envInt(env, 'PORT', service.port, 0, 65535), 0, 65535),
    host: env.HOST || '0.0.0.0',
    databaseUrl: envUrl(env, 'DATABASE_URL', ['postgres:', 'postgresql:'], true)!,
    databasePoolSize: envInt(env, 'DATABASE_POOL_SIZE', 10, 1, 200),
    // A request that cannot get a connection this fast is a 503, so an outage never hangs it.
    databaseConnectTimeoutMs: envInt(env, 'DATABASE_CONNECT_TIMEOUT_MS', 1500, 100, 60_000),
    databaseStatementTimeoutMs: envInt(env, 'DATABASE_STATEMENT_TIMEOUT_MS', 30_000, 100, 3_600_000),
    // How long a request connection may idle in the pool before it is closed (0: kept open).
    databasePoolIdleMs: envInt(env, 'DATABASE_POOL_IDLE_MS', 30_000, 0, 3_600_000),
    redisUrl: envUrl(env, 'REDIS_URL', ['redis:', 'rediss:'], false),
    redisPrefix: env.REDIS_PREFIX || `${service.name}:`,
    allowedOrigins: envOrigins(env, 'ALLOWED_ORIGINS'),
    trustProxy: trustProxy(env),
    bodyLimitBytes: envInt(env, 'BODY_LIMIT_BYTES', service.bodyLimitBytes, 1024, 50 * 1024 * 1024),
    logLevel: envOneOf(env, 'LOG_LEVEL', LOG_LEVELS, 'info'),
    shutdownTimeoutMs: envInt(env, 'SHUTDOWN_TIMEOUT_MS', 10_000, 0, 600_000),
    // How far V8 lets the heap grow past what the last full collection kept (0: V8's own choice,
    // up to 300 %, which takes the process to about 250 MB under load; 100 keeps it near 160 MB).
    heapGrowingPercent: envInt(env, 'HEAP_GROWING_PERCENT', 100, 0, 1000),
    // 0: the schema is migrated by `admin migrate` (a k8s Job) and the process waits for it.
    migrateOnStart: envOneOf(env, 'MIGRATE_ON_START', ['0', '1'] as const, '1') === '1',
    serviceRole,
    signup: envOneOf(env, 'SIGNUP', ['open', 'closed'] as const, 'closed'),
    // The session cookie: Secure and `__Host-` always, never, or (auto) when the request came over https.
    cookieSecure: envOneOf(env, 'COOKIE_SECURE', ['auto', 'always', 'never'] as const, 'auto'),
    publicUrl: publicUrl(env),
    // What MCP session ids are signed with (never logged).
    mcpSessionSecret: mcpSessionSecret(env, serviceRole),
    // How long after the user was asked a 2026-07-28 confirmation may be used, once (tests shorten it).
    mcpConfirmationSeconds: envInt(env, 'MCP_CONFIRMATION_SECONDS', 60, 1, 60),
    streams: {
      // The longest silence on a change stream before a `: keepalive` comment (tests shorten it).
      keepaliveMs: envInt(env, 'STREAM_KEEPALIVE_MS', 15_000, 50, 15_000),
      // Open change streams per account in this service, across replicas.
      maxPerAccount: envInt(env, 'STREAMS_PER_ACCOUNT', 10, 1, 1000),
      // How often streams read their feeds while notifications cannot reach them (2 s at most).
      fallbackPollMs: envInt(env, 'STREAM_FALLBACK_POLL_MS', 1000, 50, 2000),
    },
    oauth: {
      // Client ID Metadata Documents on private, loopback and link-local addresses (and plain http on loopback): refused unless this is 1.
      cimdAllowPrivate: envOneOf(env, 'OAUTH_CIMD_ALLOW_PRIVATE', ['0', '1'] as const, '0') === '1',
      // Exact client_id URLs fetched even there (a sibling service's document behind the same
      // gateway, as npm start names meetings'); any other private address stays refused.
      cimdTrusted: envUrls(env, 'OAUTH_CIMD_TRUSTED'),
      // Dynamic client registrations per client address per hour, across replicas.
      registrationsPerHour: envInt(env, 'OAUTH_REGISTRATIONS_PER_HOUR', 20, 1, 1_000_000),
    },
    webhooks: {
      // The first retry's delay; each next one doubles it, up to an hour.
      retryBaseMs: envInt(env, 'WEBHOOK_RETRY_BASE_MS', 5000, 10, 3_600_000),
      // Targets on private, loopback and link-local addresses: refused unless this is 1.
      allowPrivate: envOneOf(env, 'WEBHOOK_ALLOW_PRIVATE', ['0', '1'] as const, '0') === '1',
      // Deliveries this process makes at once (one per subscription at a time).
      concurrency: envInt(env, 'WEBHOOK_CONCURRENCY', 8, 1, 100),
      // Receivers get the delivery's W3C traceparent only when this is 1 (our traces are our own).
      traceContext: envOneOf(env, 'WEBHOOK_TRACE_CONTEXT', ['0', '1'] as const, '0') === '1',
      // The signing secrets' encryption keys (never logged).
      secretKeys,
    },
  };
}

/** A per-account rate limit per minute: the variable that sets it and its default (the spec's number). */
interface RateLimitDeclaration {
  name: string;
  variable: string;
  perMinute: number;
  /** Counts only reads or only writes; both when left out. */
  applies?: 'reads' | 'writes';
}

/** What a service declares about its limits (see ServiceDeclaration). */
export interface LimitsDeclaration {
  bodyLimitBytes: number;
  /** Per-account rate limits per minute. */
  rateLimits: readonly RateLimitDeclaration[];
  /** A per-client-address cap per minute (meetings' network-level cap), counted by the service. */
  networkCap?: {
    variable: string;
    perMinute: number;
    /**
     * The gateway's looser local flood guard in front of it (nginx limit_req, per gateway):
     * the default rate and burst of its `<NAME>_GUARD_RATE` and `<NAME>_GUARD_BURST`.
     */
    gatewayGuard?: { rate: string; burst: number };
  };
}

const perMinute = (env: Env, variable: string, fallback: number): number =>
  envInt(env, variable, fallback, 1, 10_000_000);

/**
 * A service's configuration, validated once at start-up and frozen: {@link serviceEnv} for its
 * name, port and body limit, each declared rate limit by name (its variable, or the declared
 * default) and the network cap where one is declared.
 */
export function serviceConfig(
  service: { name: string; port: number; limits: LimitsDeclaration },
  env: Env = process.env,
) {
  const { limits } = service;
  return Object.freeze({
    ...serviceEnv(env, { name: service.name, port: service.port, bodyLimitBytes: limits.bodyLimitBytes }),
    rateLimits: Object.fromEntries(limits.rateLimits.map((l) => [l.name, perMinute(env, l.variable, l.perMinute)])),
    networkCap: limits.networkCap && perMinute(env, limits.networkCap.variable, limits.networkCap.perMinute),
  });
}

export type ServiceConfig = ReturnType<typeof serviceConfig>;
