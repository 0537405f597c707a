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
  /**
   * Keeps this process's slots from expiring, and puts them back into a Redis that lost them: those
   * of the accounts in slice `slice` of `slices`, so a caller visiting each slice once per third of
   * the lease spreads the work over it. An account's slots are refreshed together, by one ZADD of
   * all of them and one PEXPIRE, however many streams it has open.
   */
  refresh(slice: number, slices: number): void;
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
  // `order` numbers the accounts as they come, which places each in a slice for `refresh`.
  const local = new Map<string, { ids: Set<string>; order: number }>();
  let accountsSeen = 0;
  const count = (account: string) => local.get(account)?.ids.size ?? 0;
  const hold = (account: string, id: string): void => {
    const held = local.get(account);
    if (held) held.ids.add(id);
    else local.set(account, { ids: new Set([id]), order: accountsSeen++ });
  };
  const takeLocal = (account: string, id: string): boolean => {
    if (count(account) >= o.max) return false;
    hold(account, id);
    return true;
  };
  const releaseLocal = (account: string, id: string): void => {
    const held = local.get(account);
    if (held?.ids.delete(id) && held.ids.size === 0) local.delete(account);
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
      if (count(account) >= o.max) return false;
      try {
        const taken = (await redis.eval(TAKE, 1, key(account), Date.now(), o.leaseMs, o.max, id)) === 1;
        warned = false;
        if (taken) hold(account, id);
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
    refresh(slice, slices) {
      const expires = Date.now() + o.leaseMs;
      const batch = redis.pipeline();
      for (const [account, { ids, order }] of local) {
        if (order % slices !== slice) continue;
        batch.zadd(key(account), ...[...ids].flatMap((id) => [expires, id])).pexpire(key(account), o.leaseMs);
      }
      if (batch.length > 0) batch.exec().catch(warn);
    },
  };
}
