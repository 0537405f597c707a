import type { Request, RequestHandler } from 'express';
import { MemoryStore, rateLimit, ipKeyGenerator, type Options, type Store } from 'express-rate-limit';
import type { Redis } from 'ioredis';
import { errors } from '@app/http-errors';
import { LeasingRedisStore } from './rate-limit-store.js';

export interface RateLimitOptions {
  /** Names the counter; part of the Redis key. */
  name: string;
  /** Requests allowed per window. */
  limit: number;
  windowMs: number;
  /** Shared store; without it counters live in this process only. */
  redis: Redis | null;
  /** The service's Redis key prefix, e.g. `tasks:`. */
  prefix: string;
  /** Only requests this returns true for are counted (e.g. reads vs writes). */
  applies?: (method: string) => boolean;
  /** Requests this returns true for are not counted (asked only of those `applies` counts). */
  skip?: (req: Request) => boolean;
  /**
   * `caller` (default): the caller's account, or the client address before authentication;
   * `address`: always the client address (a network-level cap).
   */
  by?: 'caller' | 'address';
}

/** Store errors are a Redis outage, which the Redis client reports once; nothing per request. */
const quietOnStoreErrors = { error: () => {}, warn: () => {} };

/**
 * A fixed-window limiter keyed by the caller's account, or by client address before
 * authentication (or always by address, see `by`). The address is Express's `req.ip`: the
 * client's own as the trusted gateway passes it in X-Forwarded-For. Answers 429 through the service's error handler (its envelope) with
 * `Retry-After`, and sets the standard `RateLimit-*` headers. Fails open if Redis is down:
 * losing rate limiting briefly beats refusing all traffic.
 */
export function createRateLimit(opts: RateLimitOptions): RequestHandler {
  const options: Partial<Options> = {
    windowMs: opts.windowMs,
    limit: opts.limit,
    standardHeaders: 'draft-6',
    legacyHeaders: false,
    passOnStoreError: true,
    logger: quietOnStoreErrors,
    keyGenerator: (req) =>
      req.caller && opts.by !== 'address' ? `a:${req.caller.accountId}` : `ip:${ipKeyGenerator(req.ip ?? '')}`,
    handler: (req, _res, next) => {
      const reset = (req as { rateLimit?: { resetTime?: Date } }).rateLimit?.resetTime?.getTime();
      const seconds = reset ? (reset - Date.now()) / 1000 : opts.windowMs / 1000;
      next(errors.tooManyRequests(seconds));
    },
  };
  const { applies = () => true, skip = () => false } = opts;
  const skipped = (req: Request) => !applies(req.method) || skip(req);
  if (opts.applies || opts.skip) options.skip = skipped;
  // Without Redis the counts are this process's; while Redis is away requests pass (passOnStoreError).
  const store = opts.redis ? new LeasingRedisStore(opts.redis, `${opts.prefix}rl:${opts.name}:`) : new MemoryStore();
  options.store = store;
  const limiter = rateLimit(options);
  return (req, res, next) =>
    limiter(req, res, (err?: unknown) => {
      if (err === undefined && !skipped(req)) chargeWith(req, store, options, opts);
      next(err);
    });
}

/** What each limit that counted a request charges for more of it: a batch counts one per command. */
const charges = new WeakMap<Request, Array<(hits: number) => Promise<void>>>();

/** Notes how the limit of `store` charges `req` more hits: its key's count, then 429 past the limit. */
function chargeWith(req: Request, store: Store, options: Partial<Options>, opts: RateLimitOptions): void {
  const charge = async (hits: number) => {
    const key = await options.keyGenerator!(req, req.res!);
    let count: Awaited<ReturnType<Store['increment']>> | undefined;
    try {
      for (let i = 0; i < hits; i += 1) count = await store.increment(key);
    } catch {
      return; // Redis is away: the limiter fails open.
    }
    if (count && count.totalHits > opts.limit) {
      const reset = count.resetTime?.getTime();
      throw errors.tooManyRequests(reset ? (reset - Date.now()) / 1000 : opts.windowMs / 1000);
    }
  };
  charges.set(req, [...(charges.get(req) ?? []), charge]);
}

/**
 * Counts `hits` more requests of `req` against every limit that counted it (a batch of commands
 * counts as many requests as it has commands); 429 `rate_limited` when that passes a limit.
 */
export async function chargeRequests(req: Request, hits: number): Promise<void> {
  if (hits <= 0) return;
  for (const charge of charges.get(req) ?? []) await charge(hits);
}

/** GET, HEAD and OPTIONS read; everything else writes. */
export const isRead = (method: string): boolean => method === 'GET' || method === 'HEAD' || method === 'OPTIONS';
