import type { EventEmitter } from 'node:events';
import type { Redis } from 'ioredis';
import type pg from 'pg';

/** Round trips counted since the counter was made, per client. */
interface RoundTrips {
  postgres: number;
  redis: number;
}

/**
 * Issue 33's bound on a write of the happy path: one Postgres round trip and at most one to Redis.
 * That one is the rate limit's next lease of hits, which the request that uses half of the current
 * lease starts in the background (no request waits for it), so a measured request may or may not
 * be the one that sends it.
 */
export function expectOneWrite(seen: RoundTrips): void {
  expect(seen.postgres).toBe(1);
  expect(seen.redis).toBeLessThanOrEqual(1);
}

/**
 * Counts the round trips a pool's connections make, from the protocol itself: Postgres ends every
 * exchange (a simple query, or an extended query's Parse/Bind/Execute up to its Sync) with one
 * ReadyForQuery message, and node-postgres's connection emits `readyForQuery` for each. pg never
 * pipelines, so that is one per statement sent (BEGIN and COMMIT included). Hook the pool before
 * it opens a connection.
 */
function countPostgres(pool: pg.Pool, seen: RoundTrips, parsed: { count: number }): void {
  pool.on('connect', (client) => {
    // The connection's own ReadyForQuery at start-up comes before this hook, and is not counted.
    // pg's Client keeps its protocol connection (an EventEmitter of messages) as `connection`; the types leave it out.
    const connection = (client as pg.PoolClient & { connection: EventEmitter & { parse(query: unknown): void } })
      .connection;
    connection.on('readyForQuery', () => {
      seen.postgres += 1;
    });
    // Every Parse message: an unnamed statement sends one each time, a prepared one only the
    // first time on its connection.
    const parse = connection.parse.bind(connection);
    connection.parse = (query: unknown) => {
      parsed.count += 1;
      parse(query);
    };
  });
}

/**
 * Counts the writes ioredis makes to its socket: one per command sent alone, one for a whole
 * pipeline or MULTI (ioredis writes a pipeline's commands in one buffer), each answered before the
 * caller goes on. Several writes in one tick (commands sent together without a pipeline) count as
 * one round trip. Rehooked on every (re)connection, whose new socket the client then uses.
 */
function countRedis(redis: Redis, seen: RoundTrips): void {
  let inTick = false;
  const hooked = new WeakSet<object>();
  const hook = () => {
    const socket = redis.stream;
    if (hooked.has(socket)) return;
    hooked.add(socket);
    const write = socket.write.bind(socket) as (...args: unknown[]) => boolean;
    socket.write = (...args: unknown[]) => {
      if (!inTick) {
        seen.redis += 1;
        inTick = true;
        process.nextTick(() => {
          inTick = false;
        });
      }
      return write(...args);
    };
  };
  if (redis.stream) hook();
  redis.on('connect', hook);
}

/** A counter over one app's pool and Redis client: `measure` gives what one piece of work cost. */
export interface RoundTripCounter {
  /** Runs `work` and returns the round trips made meanwhile (by anything on these clients). */
  measure(work: () => Promise<unknown>): Promise<RoundTrips>;
  /**
   * The most round trips one request made, over `times` requests sent by `send(n)` (n > 0, a new
   * number on every call), each right after an unmeasured one (`send(-n)`) that warms what a busy
   * client has warm: its credential in the cache, a lease of rate-limit hits, lastUsedAt written
   * for the minute, prepared statements on the connection.
   *
   * The credential cache trusts a lookup for {@link CREDENTIAL_TTL_MS} from when it was sent, so a
   * measured request must not straddle an expiry (it would count the lookup): each pair starts
   * after the cache has certainly expired (the warm-up then looks the credential up afresh), and a
   * pair that took longer than the cache's life is measured again.
   */
  perRequest(send: (n: number) => Promise<unknown>, times?: number): Promise<RoundTrips>;
  /**
   * The statements Postgres parsed (Parse messages sent) for `send(n)`, `times` times, each right
   * after the same request ran once (`send(n - 1)`) on the connection it will use: sequential
   * requests reuse the pool's last released connection. A write that runs as a prepared statement
   * gives a zero each time. `n` makes each request its own (a new date, new content). Each pair,
   * as in perRequest, starts after the credential cache has expired and is measured again if it
   * outlived the cache: a measured request that looked its credential up again could run that
   * lookup on another of the pool's connections, where it is not prepared yet.
   */
  parsedWhenRepeated(send: (n: number) => Promise<unknown>, times?: number): Promise<number[]>;
}

/** The services' credential cache life (@app/auth/identity's CREDENTIAL_TTL_MS; devstack does not depend on the services' packages). */
const CREDENTIAL_TTL_MS = 1000;
/** Pairs measured again before giving up (the machine is too slow to measure a request within the cache's life). */
const ATTEMPTS = 5;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function roundTripCounter(pool: pg.Pool, redis: Redis): RoundTripCounter {
  const seen: RoundTrips = { postgres: 0, redis: 0 };
  const parsed = { count: 0 };
  countPostgres(pool, seen, parsed);
  countRedis(redis, seen);
  const measure = async (work: () => Promise<unknown>): Promise<RoundTrips> => {
    const before = { ...seen };
    await work();
    return { postgres: seen.postgres - before.postgres, redis: seen.redis - before.redis };
  };
  return {
    measure,
    async parsedWhenRepeated(send, times = 2) {
      const counts: number[] = [];
      let n = 0;
      for (let i = 1; i <= times; i++) {
        counts.push(
          await withinCredentialLife(async () => {
            await send(++n);
            // lastUsedAt is written off the request's path: let it land, and its connection go back first.
            await sleep(20);
            const before = parsed.count;
            await send(++n);
            return parsed.count - before;
          }),
        );
      }
      return counts;
    },
    async perRequest(send, times = 3) {
      const worst: RoundTrips = { postgres: 0, redis: 0 };
      let n = 0;
      // The first request of a rate-limit window takes one hit from Redis, the next a lease of many.
      await send(-++n);
      for (let i = 1; i <= times; i++) {
        const one = await withinCredentialLife(async () => {
          await send(-++n);
          // lastUsedAt is written off the request's path: let it land before measuring.
          await sleep(20);
          return measure(() => send(n));
        });
        worst.postgres = Math.max(worst.postgres, one.postgres);
        worst.redis = Math.max(worst.redis, one.redis);
      }
      return worst;
    },
  };
}

/**
 * Runs `pair` (a warm-up request, then the measured one) once the credential cache has certainly
 * expired, so the warm-up looks the credential up afresh and the measured request finds it cached;
 * a pair that took longer than the cache's life runs again, up to ATTEMPTS times.
 */
async function withinCredentialLife<T>(pair: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    await sleep(CREDENTIAL_TTL_MS + 50);
    const started = Date.now();
    const result = await pair();
    if (Date.now() - started < CREDENTIAL_TTL_MS) return result;
    if (attempt === ATTEMPTS)
      throw new Error(
        `no warm-up and measured request within ${CREDENTIAL_TTL_MS} ms in ${ATTEMPTS} attempts: the machine is too busy to measure`,
      );
  }
}
