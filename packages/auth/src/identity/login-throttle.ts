import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';

/** DESIGN.md: 10 failed sign-ins for one email within 15 minutes, then 429 until the window ends. */
const LOGIN_FAILURE_LIMIT = 10;
const LOGIN_WINDOW_MS = 15 * 60_000;
/** DESIGN.md "Hardening": one client address gets at most 100 failed sign-ins an hour, whatever the emails. */
const ADDRESS_FAILURE_LIMIT = 100;
const ADDRESS_WINDOW_MS = 60 * 60_000;

/**
 * Every sign-in attempt is counted as a failure before its password hash is checked, in one atomic
 * step that also refuses it when a limit is spent; a right password then takes its count back.
 * Checking first and counting after the (slow) hash would let a parallel burst through unchecked.
 */
export interface LoginThrottle {
  /** Counts the attempt; seconds to wait (429, the attempt not counted) when a limit is spent, else 0. */
  begin(email: string, address: string): Promise<number>;
  /** The password was right: the email's count starts afresh and the address's attempt is taken back. */
  succeeded(email: string, address: string): Promise<void>;
}

/** A counter key part: hashed, so Redis holds no addresses (email or IP). */
const hashed = (value: string) => createHash('sha256').update(value.toLowerCase()).digest('base64url');

/**
 * KEYS: the email's and the address's counters; ARGV: their limits and windows (ms). Each counter's
 * window opens at its first failure and is not extended by later ones. An attempt over either limit
 * is taken back out of both and answered with the longer wait (ms).
 */
const BEGIN = `local waits = 0
for i = 1, 2 do
  local n = redis.call('incr', KEYS[i])
  if n == 1 then redis.call('pexpire', KEYS[i], ARGV[i * 2]) end
  if n > tonumber(ARGV[i * 2 - 1]) then
    local ttl = redis.call('pttl', KEYS[i])
    if ttl < 0 then
      redis.call('pexpire', KEYS[i], ARGV[i * 2])
      ttl = tonumber(ARGV[i * 2])
    end
    if ttl > waits then waits = ttl end
  end
end
if waits > 0 then
  redis.call('decr', KEYS[1])
  redis.call('decr', KEYS[2])
end
return waits`;
const SUCCEEDED = `redis.call('del', KEYS[1])
if redis.call('decr', KEYS[2]) < 0 then redis.call('del', KEYS[2]) end
return 0`;

/**
 * Failed sign-ins per email (15 minutes) and per client address (an hour) in fixed windows. With
 * Redis the counts are shared by every replica (`<prefix>login:<sha256(email)>`,
 * `<prefix>login-addr:<sha256(ip)>`); without it, kept in this process. A Redis error lets the
 * sign-in through with a warning, as the rate limits fail open.
 */
export function createLoginThrottle(redis: Redis | null, prefix: string, logger: Logger): LoginThrottle {
  if (!redis) return inProcessThrottle();
  const keys = (email: string, address: string) => [
    `${prefix}login:${hashed(email)}`,
    `${prefix}login-addr:${hashed(address)}`,
  ];
  const failOpen = (err: unknown) =>
    logger.warn({ err: (err as Error).message }, 'login throttle unavailable (redis); allowing sign-in');
  const limits = [LOGIN_FAILURE_LIMIT, LOGIN_WINDOW_MS, ADDRESS_FAILURE_LIMIT, ADDRESS_WINDOW_MS].map(String);
  return {
    async begin(email, address) {
      try {
        const waitMs = Number(await redis.eval(BEGIN, 2, ...keys(email, address), ...limits));
        return waitMs > 0 ? Math.ceil(waitMs / 1000) : 0;
      } catch (err) {
        failOpen(err);
        return 0;
      }
    },
    async succeeded(email, address) {
      await redis.eval(SUCCEEDED, 2, ...keys(email, address)).catch(failOpen);
    },
  };
}

/** Counters in this process: JavaScript runs `begin` to its end before another attempt starts. */
function inProcessThrottle(): LoginThrottle {
  const counters = new Map<string, { count: number; resetAt: number }>();
  const live = (key: string) => {
    const entry = counters.get(key);
    if (entry && entry.resetAt <= Date.now()) {
      counters.delete(key);
      return undefined;
    }
    return entry;
  };
  const count = (key: string, windowMs: number) => {
    const entry = live(key);
    if (entry) {
      entry.count += 1;
      return entry;
    }
    // Bounded memory: expired windows go when the map grows large.
    if (counters.size >= 100_000) for (const [k, v] of counters) if (v.resetAt <= Date.now()) counters.delete(k);
    const fresh = { count: 1, resetAt: Date.now() + windowMs };
    counters.set(key, fresh);
    return fresh;
  };
  return {
    async begin(email, address) {
      const byEmail = count(`e:${hashed(email)}`, LOGIN_WINDOW_MS);
      const byAddress = count(`a:${hashed(address)}`, ADDRESS_WINDOW_MS);
      const waits = [
        byEmail.count > LOGIN_FAILURE_LIMIT ? byEmail.resetAt : 0,
        byAddress.count > ADDRESS_FAILURE_LIMIT ? byAddress.resetAt : 0,
      ];
      const until = Math.max(...waits);
      if (until === 0) return 0;
      byEmail.count -= 1;
      byAddress.count -= 1;
      return Math.max(1, Math.ceil((until - Date.now()) / 1000));
    },
    async succeeded(email, address) {
      counters.delete(`e:${hashed(email)}`);
      const byAddress = live(`a:${hashed(address)}`);
      if (byAddress) byAddress.count = Math.max(0, byAddress.count - 1);
    },
  };
}
