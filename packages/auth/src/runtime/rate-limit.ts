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
   * Requests this returns true for were counted already (a tool call's REST request, by its MCP
   * request): not counted again, but a batch among them charges its further commands here.
   */
  prepaid?: (req: Request) => boolean;
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
  // Without Redis the counts are this process's; while Redis is away requests pass (passOnStoreError).
  const store = opts.redis ? new LeasingRedisStore(opts.redis, `${opts.prefix}rl:${opts.name}:`) : new MemoryStore();
  const { applies = () => true, skip = () => false, prepaid } = opts;
  // The limit notes each request it counts (or that was counted for it) with its key, for a batch
  // to charge its further commands to (chargeRequests).
  const noteCounted = (req: Request): string => {
    const key =
      req.caller && opts.by !== 'address' ? `a:${req.caller.accountId}` : `ip:${ipKeyGenerator(req.ip ?? '')}`;
    const limit = { store, key, opts };
    const limits = counted.get(req);
    if (limits) limits.push(limit);
    else counted.set(req, [limit]);
    return key;
  };
  const options: Partial<Options> = {
    windowMs: opts.windowMs,
    limit: opts.limit,
    standardHeaders: 'draft-6',
    legacyHeaders: false,
    passOnStoreError: true,
    logger: quietOnStoreErrors,
    store,
    keyGenerator: noteCounted,
    handler: (req, _res, next) => {
      const reset = (req as { rateLimit?: { resetTime?: Date } }).rateLimit?.resetTime?.getTime();
      const seconds = reset ? (reset - Date.now()) / 1000 : opts.windowMs / 1000;
      next(errors.tooManyRequests(seconds));
    },
    skip: (req) => {
      if (!applies(req.method) || skip(req)) return true;
      if (!prepaid?.(req)) return false;
      noteCounted(req);
      return true;
    },
  };
  return rateLimit(options);
}

/** The limits that counted a request, each with the key it counted it under. */
const counted = new WeakMap<Request, Array<{ store: Store; key: string; opts: RateLimitOptions }>>();

/**
 * Counts `hits` more requests of `req` against every limit that counted it (a batch of commands
 * counts as many requests as it has commands); 429 `rate_limited` when that passes a limit.
 */
export async function chargeRequests(req: Request, hits: number): Promise<void> {
  if (hits <= 0) return;
  for (const { store, key, opts } of counted.get(req) ?? []) {
    let count: Awaited<ReturnType<Store['increment']>> | undefined;
    try {
      for (let i = 0; i < hits; i += 1) count = await store.increment(key);
    } catch {
      continue; // Redis is away: the limit fails open, as it did for the request itself.
    }
    if (count && count.totalHits > opts.limit) {
      const reset = count.resetTime?.getTime();
      throw errors.tooManyRequests(reset ? (reset - Date.now()) / 1000 : opts.windowMs / 1000);
    }
  }
}

/** GET, HEAD and OPTIONS read; everything else writes. */
export const isRead = (method: string): boolean => method === 'GET' || method === 'HEAD' || method === 'OPTIONS';
