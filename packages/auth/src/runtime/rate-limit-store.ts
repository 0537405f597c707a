import type { Redis } from 'ioredis';
import type { IncrementResponse, Options, Store } from 'express-rate-limit';

/** Most hits one lease takes from Redis at once. */
const MAX_LEASE = 32;
/** A lease takes at most this share of what is left of the limit. */
const LEASE_SHARE = 8;
/** Leases kept before the first sweep of ended windows. */
const SWEEP_FROM = 10_000;

/**
 * Takes `ARGV[1]` hits for a fixed window of `ARGV[2]` ms that starts with its first hit; returns
 * the window's count after them and the ms until it resets.
 */
const LEASE_SCRIPT = `local total = redis.call('incrby', KEYS[1], ARGV[1])
local ttl = redis.call('pttl', KEYS[1])
if ttl < 0 then
  redis.call('pexpire', KEYS[1], ARGV[2])
  ttl = tonumber(ARGV[2])
end
return {total, ttl}`;

/** Hits this process took from the window's count in Redis, and how many of them it has used. */
interface Lease {
  /** The window's count in Redis right after this lease was taken (the lease is its last `size` hits). */
  end: number;
  size: number;
  used: number;
  resetAt: number;
  /** The lease taken ahead, while this one still had hits: it is used once this one is spent. */
  next?: Lease;
}

/** A lease of at least this many hits takes the next one when half of it is used. */
const AHEAD_FROM = 8;

const hasHits = (lease: Lease, now: number): boolean => lease.used < lease.size && now < lease.resetAt;

/**
 * An express-rate-limit store whose counts live in Redis, shared by every instance, that does
 * not ask Redis on every request. Each instance takes hits from a key's count in small leases
 * (up to 32, and at most an eighth of what is left of the limit) and hands them out locally: a
 * request's place in the window is its hit's place in the Redis count. So no instance ever
 * admits a request past the limit, and with one instance every count and `RateLimit-Remaining`
 * is exact; near the limit the leases shrink to one hit, as one INCR per request would be.
 * Once half of a lease of 8 hits or more is used, the next is taken in the background, so in
 * steady traffic no request waits for Redis (a request that found its lease spent used to wait
 * for the next, with every request of its key behind it). With several instances a client may
 * meet its 429 a few requests early (hits leased by the others and not yet used). Redis
 * unavailable: `increment` rejects (the limiter fails open).
 */
export class LeasingRedisStore implements Store {
  readonly prefix: string;
  readonly localKeys = false;
  private windowMs = 60_000;
  private limit = Number.POSITIVE_INFINITY;
  private readonly leases = new Map<string, Lease>();
  /** Leases being taken, so concurrent requests of one key wait for one rather than each taking one. */
  private readonly taking = new Map<string, Promise<void>>();
  /** The next sweep runs past this many leases: twice what the last one kept, so sweeps stay rare with many live keys. */
  private sweepAt = SWEEP_FROM;

  constructor(
    private readonly redis: Redis,
    prefix: string,
  ) {
    this.prefix = prefix;
  }

  init(options: Options): void {
    this.windowMs = options.windowMs;
    if (typeof options.limit === 'number') this.limit = options.limit;
  }

  async increment(key: string): Promise<IncrementResponse> {
    for (;;) {
      const now = Date.now();
      let lease = this.leases.get(key);
      if (lease && !hasHits(lease, now) && lease.next) {
        lease = lease.next;
        this.leases.set(key, lease);
      }
      if (lease && hasHits(lease, now)) {
        lease.used += 1;
        if (
          lease.size >= AHEAD_FROM &&
          lease.used === Math.ceil(lease.size / 2) &&
          !lease.next &&
          !this.taking.has(key)
        ) {
          // Nobody waits for it; a failure leaves the next request to take a lease (and fail open).
          this.startTaking(key, lease).catch(() => {});
        }
        return { totalHits: lease.end - lease.size + lease.used, resetTime: new Date(lease.resetAt) };
      }
      await (this.taking.get(key) ?? this.startTaking(key, lease));
    }
  }

  private startTaking(key: string, previous: Lease | undefined): Promise<void> {
    const taking = this.take(key, previous).finally(() => this.taking.delete(key));
    this.taking.set(key, taking);
    return taking;
  }

  /** Takes a lease after `previous`: the key's lease if that one is spent, else the one after it. */
  private async take(key: string, previous: Lease | undefined): Promise<void> {
    if (this.redis.status !== 'ready') throw new Error('redis is not connected');
    // The first lease of a window is one hit: the count it answers sizes the next ones.
    const known = previous && Date.now() < previous.resetAt ? previous.end : undefined;
    const size =
      known === undefined ? 1 : Math.max(1, Math.min(MAX_LEASE, Math.floor((this.limit - known) / LEASE_SHARE)));
    const [end, ttl] = (await this.redis.eval(LEASE_SCRIPT, 1, this.prefix + key, size, this.windowMs)) as [
      number,
      number,
    ];
    if (this.leases.size > this.sweepAt) this.sweep();
    const lease: Lease = { end, size, used: 0, resetAt: Date.now() + ttl };
    const current = this.leases.get(key);
    if (current && hasHits(current, Date.now())) current.next = lease;
    else this.leases.set(key, lease);
  }

  /** Leases of windows that have ended. */
  private sweep(): void {
    const now = Date.now();
    for (const [key, lease] of this.leases) {
      if (lease.resetAt > now) continue;
      // A lease taken ahead may belong to the window after the one that ended.
      if (lease.next && lease.next.resetAt > now) this.leases.set(key, lease.next);
      else this.leases.delete(key);
    }
    this.sweepAt = Math.max(SWEEP_FROM, 2 * this.leases.size);
  }

  /** A hit given back goes back to this instance's lease (express-rate-limit calls it for skipped outcomes). */
  decrement(key: string): void {
    const lease = this.leases.get(key);
    if (lease && lease.used > 0) lease.used -= 1;
  }

  async resetKey(key: string): Promise<void> {
    this.leases.delete(key);
    await this.redis.del(this.prefix + key);
  }
}
