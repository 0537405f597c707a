import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';

/** DESIGN.md: 10 failed sign-ins for one email within 15 minutes, then 429 until the window ends. */
export const LOGIN_FAILURE_LIMIT = 10;
export const LOGIN_WINDOW_MS = 15 * 60_000;

export interface LoginThrottle {
  /** Seconds until sign-in is allowed again for this email, or 0 when it is allowed now. */
  blockedFor(email: string): Promise<number>;
  recordFailure(email: string): Promise<void>;
  /** A successful sign-in starts the count afresh. */
  reset(email: string): Promise<void>;
}

/** The email as a counter key: hashed, so Redis holds no addresses. */
const emailKey = (email: string) => createHash('sha256').update(email.toLowerCase()).digest('base64url');

/**
 * Failed sign-ins per email in a fixed window that opens at the first failure. With Redis the
 * count is shared by every replica (key `<prefix>login:<sha256(email)>`); without it, kept in this
 * process. A Redis error lets the sign-in through with a warning, as the rate limits fail open.
 */
export function createLoginThrottle(redis: Redis | null, prefix: string, logger: Logger): LoginThrottle {
  if (!redis) return inProcessThrottle();
  const key = (email: string) => `${prefix}login:${emailKey(email)}`;
  const failOpen = (err: unknown) => logger.warn({ err: (err as Error).message }, 'login throttle unavailable (redis); allowing sign-in');
  return {
    async blockedFor(email) {
      try {
        const [[, count], [, ttl]] = (await redis.multi().get(key(email)).pttl(key(email)).exec()) as [[null, string | null], [null, number]];
        return Number(count ?? 0) >= LOGIN_FAILURE_LIMIT && ttl > 0 ? Math.ceil(ttl / 1000) : 0;
      } catch (err) {
        failOpen(err);
        return 0;
      }
    },
    async recordFailure(email) {
      try {
        // NX: the window opens at the first failure and is not extended by later ones.
        await redis.multi().incr(key(email)).pexpire(key(email), LOGIN_WINDOW_MS, 'NX').exec();
      } catch (err) {
        failOpen(err);
      }
    },
    async reset(email) {
      await redis.del(key(email)).catch(failOpen);
    },
  };
}

function inProcessThrottle(): LoginThrottle {
  const failures = new Map<string, { count: number; resetAt: number }>();
  const live = (email: string) => {
    const entry = failures.get(emailKey(email));
    if (entry && entry.resetAt <= Date.now()) {
      failures.delete(emailKey(email));
      return undefined;
    }
    return entry;
  };
  return {
    async blockedFor(email) {
      const entry = live(email);
      return entry && entry.count >= LOGIN_FAILURE_LIMIT ? Math.ceil((entry.resetAt - Date.now()) / 1000) : 0;
    },
    async recordFailure(email) {
      const entry = live(email);
      if (entry) entry.count += 1;
      else {
        // Bounded memory: expired windows go when the map grows large.
        if (failures.size >= 100_000) for (const [k, v] of failures) if (v.resetAt <= Date.now()) failures.delete(k);
        failures.set(emailKey(email), { count: 1, resetAt: Date.now() + LOGIN_WINDOW_MS });
      }
    },
    async reset(email) {
      failures.delete(emailKey(email));
    },
  };
}
