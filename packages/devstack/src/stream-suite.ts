import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { openEventStream, openPausedStream, type OpenedStream, type PausedStream } from './event-stream.js';
import { LARGEST_CHANGE_BYTES, writeLargestChanges } from './stream-load.js';
import { pollUntil } from './poll.js';
import type { Service } from './product.js';

interface StreamApp {
  server: { address(): AddressInfo | string | null };
  /** The app's Redis client and key prefix (the slots live under `<prefix>streams:<account>`). */
  redis: {
    del(...keys: string[]): Promise<number>;
    zcard(key: string): Promise<number>;
    zcount(key: string, min: number, max: string): Promise<number>;
    pttl(key: string): Promise<number>;
  };
  config: { redisPrefix: string; databaseUrl: string };
  app: { locals: Record<string, unknown> };
  caller(scopes?: string[]): Promise<{ accountId: string; auth: string }>;
  admin(...argv: string[]): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

/** The Redis key of an account's stream slots (a sorted set, packages/auth's streams/slots.ts). */
const slotsKey = (t: StreamApp, accountId: string) => `${t.config.redisPrefix}streams:${accountId}`;

export interface StreamSuiteOptions<T extends StreamApp> {
  service: Service;
  /** The stream's path, e.g. `/api/changes/stream`. */
  path: string;
  /** The app, with a short keepalive (the suite sets STREAM_KEEPALIVE_MS) and no rate limit in the way. */
  start(env: Record<string, string>): Promise<T>;
  /** Makes one change of `caller`'s that the stream carries; returns the change's `id` in the feed. */
  write(t: T, caller: { accountId: string; auth: string }, n: number): Promise<string>;
  /** The scopes of a key that may not read the stream (403). */
  withoutReadScope: string[];
  /**
   * Changes record `id` (from {@link write}) through `client`, whose transaction the suite holds
   * open: the SQL a write of the service runs, so the feed's triggers fire. The session is an
   * operator's (the default search_path, without the service's schema): name the tables with it.
   */
  touch(client: pg.ClientBase, caller: { accountId: string }, id: string): Promise<void>;
}

/** The id a change event names its record by (tasks/meetings `id`, clipboard `id` as well). */
const changeId = (c: { id: string }) => c.id;

/** A history larger than a stream's unsent window (1 MiB) and what the sockets' buffers take on loopback. */
const BEHIND_BYTES = 8 * 1024 * 1024;
/** The services' rate limits out of the way of writing that history. */
const UNLIMITED = Object.fromEntries(
  ['RATE_LIMIT_PER_MINUTE', 'RATE_LIMIT_READS_PER_MINUTE', 'RATE_LIMIT_WRITES_PER_MINUTE'].map((name) => [
    name,
    '1000000',
  ]),
);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** What the stream suite's tests share: the app and the ways to open streams and sessions on it. */
interface StreamContext<T extends StreamApp> {
  /** Set by the suite's `beforeAll`: read it inside a test, not when the tests are declared. */
  t: T;
  /** `http://127.0.0.1:<port>`, the app's (set with `t`). */
  origin: string;
  /** Opens the stream (closed after the test). */
  open: (auth: string, headers?: Record<string, string>, query?: string) => Promise<OpenedStream>;
  /** Opens the stream without reading it (closed after the test). */
  openPaused: (auth: string) => Promise<PausedStream>;
  /** A session of its own, with the default search_path (ended after the test). */
  connect: () => Promise<pg.Client>;
}

/** Starts the app for the enclosing `describe` and ends, after each test, the streams and sessions it opened. */
function streamHarness<T extends StreamApp>(o: StreamSuiteOptions<T>): StreamContext<T> {
  const opened: Array<OpenedStream | PausedStream> = [];
  const clients: pg.Client[] = [];
  let url: string;
  const ctx = {
    open: async (auth: string, headers: Record<string, string> = {}, query = '') => {
      const s = await openEventStream(`${url}${query}`, { Authorization: auth, ...headers });
      opened.push(s);
      return s;
    },
    openPaused: async (auth: string) => {
      const s = await openPausedStream(url, { Authorization: auth });
      opened.push(s);
      return s;
    },
    connect: async () => {
      const client = new pg.Client({ connectionString: ctx.t.config.databaseUrl });
      await client.connect();
      clients.push(client);
      return client;
    },
  } as StreamContext<T>;
  beforeAll(async () => {
    ctx.t = await o.start({ STREAM_KEEPALIVE_MS: '300', ...UNLIMITED });
    ctx.origin = `http://127.0.0.1:${(ctx.t.server.address() as AddressInfo).port}`;
    url = `${ctx.origin}${o.path}`;
  });
  afterEach(() => {
    for (const s of opened.splice(0)) s.close();
  });
  afterAll(() => ctx.t.close());
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.end().catch(() => {})));
  });
  return ctx;
}

/**
 * The live change stream's contract (DESIGN.md "Live change streams"), the same for the three
 * services: headers, backlog then live, Last-Event-ID resume exactly once, keepalive, the
 * 11th stream's 429, a revoked key's stream ended within a second, a bad start refused before
 * the stream, and shutdown's `retry:`.
 */
export function streamSuite<T extends StreamApp>(o: StreamSuiteOptions<T>): void {
  describe(`GET ${o.path} (${o.service})`, () => {
    const ctx = streamHarness(o);
    deliveryTests(o, ctx);
    underWayTests(o, ctx);
    admissionTests(o, ctx);
    endingTests(o, ctx);
  });
}

/** What a stream carries: the backlog, then each commit (announced only while streamed), a resume exactly once, keepalives. */
function deliveryTests<T extends StreamApp>(o: StreamSuiteOptions<T>, ctx: StreamContext<T>): void {
  const { open, connect } = ctx;
  it('sends the backlog, then each change as it commits, as text/event-stream events with the feed cursor as id', async () => {
    const c = await ctx.t.caller();
    const first = await o.write(ctx.t, c, 1);
    const s = await open(c.auth);
    expect(s.status).toBe(200);
    expect(s.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(s.headers.get('cache-control')).toBe('no-cache, no-transform');
    expect(s.headers.get('x-accel-buffering')).toBe('no');
    await s.until(() => s.changes().length === 1);
    expect(changeId(s.changes()[0]!.change)).toBe(first);
    const second = await o.write(ctx.t, c, 2);
    // Committed by the time the write answers: the event follows within moments (the write's own
    // time, 1 s and more beside CI's other lanes, is not the stream's).
    const committed = Date.now();
    await s.until(() => s.changes().length === 2, 3000);
    expect(changeId(s.changes()[1]!.change)).toBe(second);
    expect(s.blocks.find((b) => b.event === 'change' && b.data?.includes(second))!.at - committed).toBeLessThan(2000);
    for (const b of s.blocks.filter((x) => x.event === 'change')) expect(b.id).toEqual(expect.any(String));
  });

  it('announces a write only while its account is streamed (a notice per write would serialize every commit)', async () => {
    const listener = await connect();
    const notices: string[] = [];
    listener.on('notification', (n) => notices.push(n.payload ?? ''));
    await listener.query(`listen ${o.service}_streams`);
    const settle = () => new Promise((r) => setTimeout(r, 300));
    const c = await ctx.t.caller();
    await o.write(ctx.t, c, 1);
    await settle();
    const unstreamed = notices.splice(0);

    const s = await open(c.auth);
    await s.until(() => s.changes().length === 1);
    await o.write(ctx.t, c, 2);
    await s.until(() => s.changes().length === 2);
    await settle();
    // c:<key>:<position>, the key being the account (the workspace for tasks).
    const announced = notices.splice(0).filter((n) => n.startsWith('c:'));
    expect(announced.length).toBeGreaterThan(0);
    const key = announced[0]!.split(':')[1]!;
    expect(unstreamed.filter((n) => n.startsWith(`c:${key}:`))).toEqual([]);

    s.close();
    await settle();
    await o.write(ctx.t, c, 3);
    await settle();
    expect(notices.filter((n) => n.startsWith(`c:${key}:`))).toEqual([]);
  });

  it('writes its watch again when the database lost it (a lease run out during an outage), once the listener is back', async () => {
    const c = await ctx.t.caller();
    await o.write(ctx.t, c, 1);
    const s = await open(c.auth);
    await s.until(() => s.changes().length === 1);
    const admin = await connect();
    const watches = async () =>
      (await admin.query<{ n: number }>(`select count(*)::int as n from ${o.service}.stream_watches`)).rows[0]!.n;
    expect(await watches()).toBeGreaterThan(0);
    await admin.query(`delete from ${o.service}.stream_watches`);
    await admin.query(`select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1`, [
      `${o.service}-streams`,
    ]);
    expect(await pollUntil(watches, (n) => n > 0)).toBeGreaterThan(0);
    const second = await o.write(ctx.t, c, 2);
    await s.until(() => s.changes().length === 2, 3000);
    expect(changeId(s.changes()[1]!.change)).toBe(second);
  });

  it('sweeps a watch that a dead process left a day past its lease, and leaves one whose lease just ran out', async () => {
    const c = await ctx.t.caller();
    const admin = await connect();
    const table = `${o.service}.stream_watches`;
    // Dead holders: one lease just run out on a key nobody streams, one a day past it.
    const recent = '00000000-0000-4000-8000-000000000001';
    const old = '00000000-0000-4000-8000-000000000002';
    await admin.query(
      `insert into ${table} (key, holder, expires_at) values ($1, gen_random_uuid(), now() - interval '1 minute'), ($2, gen_random_uuid(), now() - interval '25 hours')`,
      [recent, old],
    );
    const s = await open(c.auth);
    await s.until(() => s.blocks.length > 0);
    const { rows } = await admin.query<{ key: string }>(`select key::text from ${table} where key = any($1::uuid[])`, [
      [recent, old],
    ]);
    expect(rows.map((r) => r.key)).toEqual([recent]);
    await admin.query(`delete from ${table} where key = $1`, [recent]);
  });

  it('resumes after Last-Event-ID (or ?cursor=) with exactly the changes after it, once each', async () => {
    const c = await ctx.t.caller();
    await o.write(ctx.t, c, 1);
    const s = await open(c.auth);
    await s.until(() => s.changes().length === 1);
    const last = s.lastId()!;
    s.close();
    const a = await o.write(ctx.t, c, 2);
    const b = await o.write(ctx.t, c, 3);
    const resumed = await open(c.auth, { 'Last-Event-ID': last });
    await resumed.until(() => resumed.changes().length >= 2);
    await new Promise((r) => setTimeout(r, 300));
    expect(resumed.changes().map((e) => changeId(e.change))).toEqual([a, b]);
    const byQuery = await open(
      c.auth,
      { 'Last-Event-ID': 'ignored-when-the-query-names-one' },
      `?cursor=${encodeURIComponent(resumed.changes()[0]!.id)}`,
    );
    await byQuery.until(() => byQuery.changes().length >= 1);
    await new Promise((r) => setTimeout(r, 300));
    expect(byQuery.changes().map((e) => changeId(e.change))).toEqual([b]);
  });

  it('sends a change once on each stream of its account, from whatever place each stream stands at', async () => {
    const c = await ctx.t.caller();
    const a = await o.write(ctx.t, c, 1);
    const first = await open(c.auth);
    await first.until(() => first.changes().length === 1);
    const b = await o.write(ctx.t, c, 2);
    await first.until(() => first.changes().length === 2);
    const [afterA, afterB] = first.changes().map((e) => e.id);
    // Four streams at four places (a full sync, after a, after b, and the first's), which the
    // next change wakes together: the service may read it once for all of them.
    const fromA = await open(c.auth, { 'Last-Event-ID': afterA! });
    const fromB = await open(c.auth, { 'Last-Event-ID': afterB! });
    const later = await open(c.auth);
    await fromA.until(() => fromA.changes().length === 1);
    await fromB.until(() => fromB.blocks.length > 0);
    await later.until(() => later.changes().length === 2);
    const d = await o.write(ctx.t, c, 3);
    for (const s of [first, fromA, fromB, later])
      await s.until(() => s.changes().some((e) => changeId(e.change) === d));
    await sleep(300);
    const ids = (s: OpenedStream) => s.changes().map((e) => changeId(e.change));
    expect([ids(first), ids(fromA), ids(fromB), ids(later)]).toEqual([[a, b, d], [b, d], [d], [a, b, d]]);
  });

  it('sends a keepalive comment while idle (STREAM_KEEPALIVE_MS)', async () => {
    const c = await ctx.t.caller();
    const s = await open(c.auth);
    await s.until(() => s.blocks.some((b) => b.comment === 'keepalive'), 2000);
  });
}

/**
 * A write under way when its stream opened, which looked for the key's watch before the watch
 * committed and so was not announced: the watch's registration waits it out, then the stream reads.
 */
function underWayTests<T extends StreamApp>(o: StreamSuiteOptions<T>, ctx: StreamContext<T>): void {
  const { open, connect } = ctx;
  /** Changes `id` in a transaction open while the caller's stream opens; its commit reaches the stream within 3 s. */
  const deliveredUnderWay = async (c: { accountId: string; auth: string }, id: string) => {
    const writer = await connect();
    await writer.query('begin');
    await o.touch(writer, c, id);
    const s = await open(c.auth);
    await s.until(() => s.changes().length === 1);
    await writer.query('commit');
    await s.until(() => s.changes().length === 2, 3000);
    expect(s.changes().map((e) => changeId(e.change))).toEqual([id, id]);
  };
  it('delivers a write that was already under way, unannounced, when the stream opened', async () => {
    const c = await ctx.t.caller();
    const id = await o.write(ctx.t, c, 1);
    await deliveredUnderWay(c, id);
  });

  it("delivers such a write without waiting out a transaction of the server's other databases", async () => {
    // The listener is up and has caught up (another account's stream is open): only the wait for
    // the writes under way at the watch's commit can deliver the write.
    const warm = await open((await ctx.t.caller()).auth);
    await warm.until(() => warm.blocks.length > 0);
    const admin = await connect();
    await pollUntil(
      async () =>
        (
          await admin.query<{ n: number }>(
            `select count(*)::int as n from pg_stat_activity where application_name = $1 and state = 'idle'`,
            [`${o.service}-streams`],
          )
        ).rows[0]!.n,
      (n) => n > 0,
    );
    await sleep(300);
    const c = await ctx.t.caller();
    const id = await o.write(ctx.t, c, 1);
    // Another database's transaction, holding an id, open throughout: the write came only when it
    // ended while the watch waited out every transaction of the server (CI's lanes hold some open).
    const elsewhere = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
    await elsewhere.connect();
    try {
      await elsewhere.query('begin');
      await elsewhere.query('select pg_current_xact_id()');
      await deliveredUnderWay(c, id);
    } finally {
      await elsewhere.end();
    }
  });
}

/** Who may open a stream, and how many: a bad start, a missing scope or key, the 11th stream, slots kept and freed. */
function admissionTests<T extends StreamApp>(o: StreamSuiteOptions<T>, ctx: StreamContext<T>): void {
  const { open, openPaused, connect } = ctx;
  it('refuses a bad start before the stream (400), a key without the read scope (403) and no key (401)', async () => {
    const c = await ctx.t.caller();
    const bad = await open(c.auth, { 'Last-Event-ID': 'not-a-cursor' });
    expect(bad.status).toBe(400);
    const weak = await ctx.t.caller(o.withoutReadScope);
    expect((await open(weak.auth)).status).toBe(403);
    expect((await open('Bearer nope')).status).toBe(401);
  });

  it('answers the 11th open stream of an account 429 with Retry-After, and takes one again once a stream ends', async () => {
    const c = await ctx.t.caller();
    const ten = await Promise.all(Array.from({ length: 10 }, () => open(c.auth)));
    expect(ten.map((s) => s.status)).toEqual(Array(10).fill(200));
    const eleventh = await open(c.auth);
    expect(eleventh.status).toBe(429);
    expect(Number(eleventh.headers.get('retry-after'))).toBeGreaterThan(0);
    ten[0]!.close();
    await new Promise((r) => setTimeout(r, 200));
    expect((await open(c.auth)).status).toBe(200);
  });

  it('sends nothing before its headers while the first page is read, however long that takes, and keeps its slot', async () => {
    const c = await ctx.t.caller();
    const admin = await connect();
    // The stream's watch (written before its first read) waits for this lock: its headers come
    // only after several keepalive intervals (300 ms here), as under load.
    await admin.query('begin');
    await admin.query(`lock table ${o.service}.stream_watches in share mode`);
    const opening = open(c.auth);
    await sleep(1000);
    await admin.query('commit');
    const s = await opening;
    expect(s.headers.get('content-type')).toMatch(/^text\/event-stream/);
    await s.until(() => s.blocks.some((b) => b.comment === 'keepalive'), 2000);
    expect(s.blocks[0]).toMatchObject({ comment: 'stream open' });
    const nine = await Promise.all(Array.from({ length: 9 }, () => open(c.auth)));
    expect(nine.map((n) => n.status)).toEqual(Array(9).fill(200));
    expect((await open(c.auth)).status).toBe(429);
  });

  it('frees the slot of a client that leaves before its stream opens: ten such leave room for ten streams', async () => {
    const c = await ctx.t.caller();
    for (let i = 0; i < 10; i++) (await openPaused(c.auth)).close();
    // The server lets a slot go when it sees the close, which may wait for the stream's first read:
    // on a loaded machine longer than a moment (one of ten was still held after 500 ms). A slot
    // that leaked never comes back, so ten are tried until all open, each try's closed again.
    const statuses = await pollUntil(
      async () => {
        const ten = await Promise.all(Array.from({ length: 10 }, () => open(c.auth)));
        for (const s of ten) s.close();
        return ten.map((s) => s.status);
      },
      (seen) => seen.every((status) => status === 200),
      { timeoutMs: 10_000, everyMs: 500 },
    );
    expect(statuses).toEqual(Array(10).fill(200));
  });

  it("still answers the 11th stream 429 when Redis comes back without the open streams' slots", async () => {
    const c = await ctx.t.caller();
    const ten = await Promise.all(Array.from({ length: 10 }, () => open(c.auth)));
    expect(ten.map((s) => s.status)).toEqual(Array(10).fill(200));
    // What a Redis restart or failover leaves (or streams admitted while Redis did not answer):
    // no slot in Redis until the next refresh, while this process holds ten open streams.
    await ctx.t.redis.del(slotsKey(ctx.t, c.accountId));
    expect((await open(c.auth)).status).toBe(429);
  });

  it("puts each account's open streams' slots back into a Redis that lost them at the next renewal, leased for 30 s", async () => {
    const [a, b] = [await ctx.t.caller(), await ctx.t.caller()];
    const streams = await Promise.all([open(a.auth), open(a.auth), open(b.auth)]);
    expect(streams.map((s) => s.status)).toEqual([200, 200, 200]);
    const [ofA, ofB] = [slotsKey(ctx.t, a.accountId), slotsKey(ctx.t, b.accountId)];
    const held = async () => [await ctx.t.redis.zcard(ofA), await ctx.t.redis.zcard(ofB)];
    expect(await held()).toEqual([2, 1]);
    await ctx.t.redis.del(ofA, ofB);
    // Each account's slots are renewed every 10 s (a third of the lease), a slice of the accounts at a time.
    const lost = Date.now();
    expect(await pollUntil(held, (n) => n[0] === 2 && n[1] === 1, { timeoutMs: 15_000, everyMs: 200 })).toEqual([2, 1]);
    const ttl = await ctx.t.redis.pttl(ofA);
    expect(ttl).toBeGreaterThan(25_000);
    expect(ttl).toBeLessThanOrEqual(30_000);
    // Both of its slots leased anew, to 30 s after the renewal.
    expect(await ctx.t.redis.zcount(ofA, lost + 30_000, '+inf')).toBe(2);
  }, 30_000);
}

/** How a stream ends: a reader too far behind, a revoked key, shutdown. */
function endingTests<T extends StreamApp>(o: StreamSuiteOptions<T>, ctx: StreamContext<T>): void {
  const { open, openPaused } = ctx;
  // A service whose largest change stream-load.ts does not know yet (one just made by
  // new-service) skips this until it is added there.
  const largestBytes = LARGEST_CHANGE_BYTES[o.service];
  (largestBytes ? it : it.skip)(
    'ends the stream of a reader that falls more than 1 MiB behind; it resumes after the last event it took',
    async () => {
      const c = await ctx.t.caller();
      const count = Math.ceil(BEHIND_BYTES / largestBytes!);
      await writeLargestChanges(ctx.origin, o.service, c.auth, count);
      // Not read until the server has ended the stream, seen as its slot leaving Redis (the account
      // has no other stream). How long the server takes to fill the sockets' buffers and then wait a
      // keepalive turn (300 ms here) is the machine's business: a fixed pause of 6 s was too short
      // beside CI's other lanes, and a reader that drains too early never falls behind at all.
      const paused = await openPaused(c.auth);
      const slots = slotsKey(ctx.t, c.accountId);
      const held = () => ctx.t.redis.zcard(slots);
      expect(await pollUntil(held, (n) => n === 1, { timeoutMs: 10_000 })).toBe(1);
      await pollUntil(held, (n) => n === 0, { timeoutMs: 45_000, everyMs: 250 });
      const taken = await paused.drain(5000);
      paused.close();
      expect({ status: taken.status, ended: taken.ended }).toEqual({ status: 200, ended: true });
      const ids = taken.blocks.filter((b) => b.event === 'change').map((b) => b.id!);
      expect(ids.length).toBeLessThan(count);
      const resumed = await open(c.auth, { 'Last-Event-ID': ids.at(-1)! });
      await resumed.until((s) => s.changes().length === count - ids.length, 20_000);
    },
    // Its own waits come to at most 80 s (10, 45 + 5, 20) after writing the history: 420 tasks of
    // 20 KB, 3 s on an idle machine, 9 s beside five busy loops and more under CI's three lanes.
    120_000,
  );

  it('ends the streams of a revoked key within a second', async () => {
    const account = await ctx.t.admin('create-account', '--email', `${Date.now()}-${Math.random()}@example.test`);
    const key = await ctx.t.admin('create-key', '--account', account.accountId as string);
    const s = await open(`Bearer ${key.key as string}`);
    await s.until(() => s.blocks.length > 0);
    const revoked = Date.now();
    await ctx.t.admin('revoke-key', '--id', key.id as string);
    expect((await s.ended) - revoked).toBeLessThan(1000);
  });

  it('ends every stream with retry: on shutdown', async () => {
    const c = await ctx.t.caller();
    const s = await open(c.auth);
    await s.until(() => s.blocks.length > 0);
    await (ctx.t.app.locals.streamHub as { close(): Promise<void> }).close();
    await s.ended;
    expect(s.blocks.at(-1)).toMatchObject({ retry: '1000' });
  });
}
