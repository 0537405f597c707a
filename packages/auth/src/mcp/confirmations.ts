/*
 * 2026-07-28 confirmations are single use. The signed requestState carries a random id; the retry
 * that goes ahead claims it, once, for as long as the state could still be read: in Redis (SET NX,
 * so every replica sees the claim) or, without Redis (one instance), in this process's memory.
 */
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';

/** What claiming a confirmation's id found: first use, used already, or no way to know (Redis down). */
type Claim = 'claimed' | 'spent' | 'unavailable';

export interface UsedConfirmations {
  /** Marks `id` used for `seconds`; only the first claim of an id is `claimed`. */
  claim(id: string, seconds: number): Promise<Claim>;
}

export function usedConfirmations(o: { redis: Redis | null; prefix: string; logger: Logger }): UsedConfirmations {
  if (o.redis) {
    const redis = o.redis;
    return {
      async claim(id, seconds) {
        try {
          return (await redis.set(`${o.prefix}mcp:confirmation:${id}`, '1', 'EX', seconds, 'NX')) === 'OK'
            ? 'claimed'
            : 'spent';
        } catch (err) {
          o.logger.warn(
            { err: err instanceof Error ? err.message : String(err) },
            'an MCP confirmation could not be checked for reuse: redis unavailable',
          );
          return 'unavailable';
        }
      },
    };
  }
  // Id -> when it may be forgotten. Every claim lives as long, so the oldest come first and leave first.
  const used = new Map<string, number>();
  return {
    async claim(id, seconds) {
      const now = Date.now();
      for (const [old, until] of used) {
        if (until > now) break;
        used.delete(old);
      }
      if (used.has(id)) return 'spent';
      used.set(id, now + seconds * 1000);
      return 'claimed';
    },
  };
}
