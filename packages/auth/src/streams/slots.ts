import type { Redis } from 'ioredis';
import type { Logger } from 'pino';

/**
 * Takes a slot when fewer than ARGV[3] live ones remain: one sorted set per account, a member per
 * open stream scored with its expiry, so the slots of a process that died without releasing
 * them run out by themselves (crash-safe) while live streams keep refreshing theirs.
 */
const TAKE = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
redis.call('ZADD', KEYS[1], tonumber(ARGV[1]) + tonumber(ARGV[2]), ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`;

/** The open streams of each account, counted across replicas (Redis) or in this process (no Redis). */
export interface StreamSlots {
  /** Whether the account may open one more stream; `id` names the slot taken. */
  take(account: string, id: string): Promise<boolean>;
  release(account: string, id: string): void;
  /** Keeps the slots of live streams from expiring, and puts them back into a Redis that lost them (called every third of the lease). */
  refresh(held: Iterable<{ account: string; id: string }>): void;
}

/**
 * Per-account stream slots. With Redis each slot is leased for `leaseMs` and refreshed while its
 * stream lives; when Redis fails, this process's own streams are counted (one warning). `kind`
 * names what is counted (default `streams`; the clipboard counts its running text searches so).
 */
export function createStreamSlots(o: {
  redis: Redis | null;
  prefix: string;
  max: number;
  leaseMs: number;
  logger: Logger;
  kind?: string;
}): StreamSlots {
  const redis = o.redis;
  // This process's own streams: the whole count without Redis, and the fallback when Redis does
  // not answer (down, or slower than its command timeout under load), so the limit then holds
  // per process instead of not at all.
  const local = new Map<string, Set<string>>();
  const takeLocal = (account: string, id: string): boolean => {
    const held = local.get(account) ?? new Set<string>();
    if (held.size >= o.max) return false;
    local.set(account, held.add(id));
    return true;
  };
  const releaseLocal = (account: string, id: string): void => {
    const held = local.get(account);
    if (held?.delete(id) && held.size === 0) local.delete(account);
  };
  if (!redis) {
    return {
      take: (account, id) => Promise.resolve(takeLocal(account, id)),
      release: releaseLocal,
      refresh: () => {},
    };
  }
  const key = (account: string) => `${o.prefix}${o.kind ?? 'streams'}:${account}`;
  let warned = false;
  const warn = (err: unknown) => {
    if (warned) return;
    warned = true;
    o.logger.warn(
      { err: err instanceof Error ? err.message : String(err) },
      `redis unavailable: the per-account limit of ${o.kind ?? 'streams'} counts this process only until it is back`,
    );
  };
  return {
    async take(account, id) {
      // This process's own streams are a part of the account's count: enough of them refuse at
      // once. Streams admitted while Redis did not answer are in Redis only from the next refresh,
      // so Redis alone could admit an 11th meanwhile.
      if ((local.get(account)?.size ?? 0) >= o.max) return false;
      try {
        const taken = (await redis.eval(TAKE, 1, key(account), Date.now(), o.leaseMs, o.max, id)) === 1;
        warned = false;
        if (taken) local.set(account, (local.get(account) ?? new Set<string>()).add(id));
        return taken;
      } catch (err) {
        warn(err);
        return takeLocal(account, id);
      }
    },
    release(account, id) {
      releaseLocal(account, id);
      redis.zrem(key(account), id).catch(warn);
    },
    refresh(held) {
      const expires = Date.now() + o.leaseMs;
      const batch = redis.pipeline();
      let any = false;
      for (const slot of held) {
        any = true;
        batch.zadd(key(slot.account), expires, slot.id).pexpire(key(slot.account), o.leaseMs);
      }
      if (any) batch.exec().catch(warn);
    },
  };
}
