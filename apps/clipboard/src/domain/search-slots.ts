import { randomUUID } from 'node:crypto';
import type { ServiceDeps } from '@app/auth/runtime';
import { createStreamSlots } from '@app/auth/streams';
import { fail } from './errors.js';
import { MAX_SEARCHES_PER_ACCOUNT } from './limits.js';

/** A search's slot lease: a replica that dies mid-search frees its slot this long after (a search runs at most SEARCH_TIMEOUT_MS). */
const LEASE_MS = 10_000;

/** Runs one text search of an account, or answers 429 when the account has its most running already. */
export type SearchSlots = <T>(accountId: string, search: () => Promise<T>) => Promise<T>;

/**
 * At most MAX_SEARCHES_PER_ACCOUNT text searches of one account run at once, across replicas (a
 * Redis sorted set per account, as the stream slots; this process's count when Redis is away):
 * however expensive its searches, one account holds at most that many database connections.
 */
export function searchSlots(deps: Pick<ServiceDeps, 'redis' | 'config' | 'logger'>): SearchSlots {
  const slots = createStreamSlots({
    redis: deps.redis,
    prefix: deps.config.redisPrefix,
    max: MAX_SEARCHES_PER_ACCOUNT,
    leaseMs: LEASE_MS,
    logger: deps.logger,
    kind: 'searches',
  });
  return async (accountId, search) => {
    const id = randomUUID();
    if (!(await slots.take(accountId, id))) {
      throw fail(
        'rate_limited',
        `at most ${MAX_SEARCHES_PER_ACCOUNT} text searches of one account run at once: retry when one has answered`,
        { headers: { 'Retry-After': '1' } },
      );
    }
    try {
      return await search();
    } finally {
      slots.release(accountId, id);
    }
  };
}
