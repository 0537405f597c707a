import type { AddressInfo } from 'node:net';
import { openEventStream, type OpenedStream } from '@app/devstack';
import pg from 'pg';
import { startApp } from './helpers/factories.js';
import type { TestApp } from './helpers/harness.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Each change wakes every open stream of its account. The streams caught up at the same change
 * read its page once, together; the reads of the streams of different accounts wait their turn
 * in the stream hub, half the request pool at most at once (the test app's pool: 10), so a write
 * is answered however slow the streams' reads are: before, ten streams whose reads were held up
 * took the whole pool, and the next write waited past the pool's timeout (503).
 */
describe('GET /api/changes/stream: the streams of an account and the writes beside them', () => {
  let t: TestApp;
  const streams: OpenedStream[] = [];
  let blocker: pg.Client | undefined;
  beforeAll(async () => {
    t = await startApp({ STREAM_KEEPALIVE_MS: '300' });
  });
  afterEach(async () => {
    for (const s of streams.splice(0)) s.close();
    await blocker?.end().catch(() => {});
    blocker = undefined;
  });
  afterAll(() => t.close());

  /**
   * What the app's sessions waiting for series' lock run (the streams' reads the test holds up).
   * That lock only: a session of the app waiting on another lock (a commit waiting for the
   * server's notification queue, which every notifying commit of every database takes, say) is
   * none of the streams' reads.
   */
  const waitingOnSeries = async (client: pg.Client) =>
    (
      await client.query<{ query: string }>(
        `select a.query from pg_locks l join pg_stat_activity a using (pid)
         where not l.granted and l.locktype = 'relation' and l.relation = 'meetings.series'::regclass
           and a.datname = current_database() and a.application_name = 'meetings'`,
      )
    ).rows.map((r) => r.query);
  const countWaiting = async (client: pg.Client) => (await waitingOnSeries(client)).length;

  /** A stream of `auth` (past its opening comment). */
  const stream = async (auth: string) => {
    const url = `http://127.0.0.1:${(t.server.address() as AddressInfo).port}/api/changes/stream`;
    const s = await openEventStream(url, { Authorization: auth });
    streams.push(s);
    expect(s.status).toBe(200);
    await s.until((x) => x.blocks.some((b) => b.comment === 'stream open'));
    return s;
  };

  /** Ten new accounts with a stream each. */
  const tenAccounts = async () => {
    const callers = [];
    for (let i = 0; i < 10; i++) {
      const c = await t.caller();
      await stream(c.auth);
      callers.push(c);
    }
    return callers;
  };

  const post = (auth: string, name: string) =>
    fetch(`http://127.0.0.1:${(t.server.address() as AddressInfo).port}/api/people`, {
      method: 'POST',
      headers: { authorization: auth, 'content-type': 'application/json' },
      body: JSON.stringify({ name }),
    });
  const names = (s: OpenedStream) => s.changes().map((e) => (e.change.item as { name: string }).name);

  /**
   * A session holding series' lock: every read of the feed takes it (the page is a union over
   * notes, people, series and meetings), a person's create does not, so each stream's read waits.
   */
  const holdSeriesLock = async () => {
    const client = new pg.Client({ connectionString: t.config.databaseUrl });
    await client.connect();
    await client.query('begin');
    await client.query('lock table meetings.series in access exclusive mode');
    return client;
  };

  it('answers writes while ten streams wait on their reads, then sends every change on each stream, in order, once', async () => {
    const callers = await tenAccounts();
    blocker = await holdSeriesLock();
    for (const c of callers) expect((await post(c.auth, 'First')).status).toBe(201);
    // The ten streams woke on those commits: as many of their reads as may run are waiting on the lock.
    for (let i = 0; i < 100 && (await countWaiting(blocker)) < 5; i++) await sleep(50);
    expect(await countWaiting(blocker)).toBe(5);
    expect((await post(callers[0]!.auth, 'Second')).status).toBe(201);
    await blocker.query('commit');
    await streams[0]!.until((x) => names(x).length >= 2, 10_000);
    for (const s of streams.slice(1)) await s.until((x) => names(x).length >= 1, 10_000);
    await sleep(300);
    expect(names(streams[0]!)).toEqual(['First', 'Second']);
    for (const s of streams.slice(1)) expect(names(s)).toEqual(['First']);
  });

  it('reads a change once for the streams of its account, each at its own place, and sends each what follows its place', async () => {
    const c = await t.caller();
    const early: OpenedStream[] = [];
    for (let i = 0; i < 4; i++) early.push(await stream(c.auth));
    expect((await post(c.auth, 'One')).status).toBe(201);
    for (const s of early) await s.until((x) => names(x).length === 1, 10_000);
    // Four more whose full sync holds One, and one resuming after One (its event's id).
    const late: OpenedStream[] = [];
    for (let i = 0; i < 4; i++) late.push(await stream(c.auth));
    const url = `http://127.0.0.1:${(t.server.address() as AddressInfo).port}/api/changes/stream`;
    const resumed = await openEventStream(url, { Authorization: c.auth, 'Last-Event-ID': early[0]!.changes()[0]!.id });
    streams.push(resumed);
    await resumed.until((x) => x.blocks.some((b) => b.comment === 'stream open'));
    blocker = await holdSeriesLock();
    expect((await post(c.auth, 'Two')).status).toBe(201);
    // Nine streams at three places read one page: one read waits on the lock (before, five at once).
    await sleep(1000);
    expect(await countWaiting(blocker)).toBe(1);
    await blocker.query('commit');
    for (const s of [...early, ...late]) await s.until((x) => names(x).length >= 2, 10_000);
    await resumed.until((x) => names(x).length >= 1, 10_000);
    await sleep(300);
    for (const s of [...early, ...late]) expect(names(s)).toEqual(['One', 'Two']);
    expect(names(resumed)).toEqual(['Two']);
  });

  it('does not read for a stream that closed while its read waited for a turn', async () => {
    const callers = await tenAccounts();
    blocker = await holdSeriesLock();
    for (const c of callers) expect((await post(c.auth, 'Woke it')).status).toBe(201);
    // Five reads run (each waiting on the lock), five wait for a turn in the hub.
    for (let i = 0; i < 100 && (await countWaiting(blocker)) < 5; i++) await sleep(50);
    expect(await countWaiting(blocker)).toBe(5);
    for (const s of streams.splice(0)) s.close();
    // Until the app has seen them close (300 ms was not always enough beside CI's other lanes).
    const hub = t.app.locals.streamHub as { size: number };
    for (let i = 0; i < 200 && hub.size > 0; i++) await sleep(50);
    expect(hub.size).toBe(0);
    // A second session asks for the lock behind the five reads: once they have it and are done,
    // it holds it, and a read that started after them would wait on it.
    const behind = new pg.Client({ connectionString: t.config.databaseUrl });
    await behind.connect();
    try {
      const { pid } = (await behind.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!;
      await behind.query('begin');
      const relocked = behind.query('lock table meetings.series in access exclusive mode');
      const queued = async () =>
        (await blocker!.query('select 1 from pg_locks where pid = $1 and not granted', [pid])).rowCount === 1;
      for (let i = 0; i < 100 && !(await queued()); i++) await sleep(20);
      await blocker.query('commit');
      await relocked;
      await sleep(500);
      // A failure names what waited.
      expect(await waitingOnSeries(blocker)).toEqual([]);
      await behind.query('commit');
    } finally {
      await behind.end();
    }
  });
});
