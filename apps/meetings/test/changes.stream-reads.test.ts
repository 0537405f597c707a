import type { AddressInfo } from 'node:net';
import { openEventStream, type OpenedStream } from '@app/devstack';
import pg from 'pg';
import { startApp } from './helpers/factories.js';
import type { TestApp } from './helpers/harness.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Every open stream of an account reads the feed on each of its changes. Those reads wait their
 * turn in the stream hub, half the request pool at most at once (the test app's pool: 10), so a
 * write is answered however slow the streams' reads are: before, ten streams of one account whose
 * reads were held up took the whole pool, and the next write waited past the pool's timeout (503).
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

  /** The app's sessions waiting for a lock (the streams' reads the test holds up). */
  const waitingOnLock = async (client: pg.Client) =>
    (
      await client.query<{ n: number }>(
        `select count(*)::int as n from pg_stat_activity
         where datname = current_database() and application_name = 'meetings' and wait_event_type = 'Lock'`,
      )
    ).rows[0]!.n;

  /** A new account with ten streams open (each past its opening comment). */
  const tenStreams = async () => {
    const c = await t.caller();
    const url = `http://127.0.0.1:${(t.server.address() as AddressInfo).port}/api/changes/stream`;
    for (let i = 0; i < 10; i++) {
      const s = await openEventStream(url, { Authorization: c.auth });
      streams.push(s);
      expect(s.status).toBe(200);
      await s.until((x) => x.blocks.some((b) => b.comment === 'stream open'));
    }
    return c;
  };

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

  it('answers writes while its ten streams wait on their reads, then sends every change on each stream, in order, once', async () => {
    const c = await tenStreams();
    blocker = await holdSeriesLock();
    const post = (name: string) =>
      fetch(`http://127.0.0.1:${(t.server.address() as AddressInfo).port}/api/people`, {
        method: 'POST',
        headers: { authorization: c.auth, 'content-type': 'application/json' },
        body: JSON.stringify({ name }),
      });
    expect((await post('First')).status).toBe(201);
    // The ten streams woke on its commit: as many of their reads as may run are waiting on the lock.
    for (let i = 0; i < 100 && (await waitingOnLock(blocker)) < 5; i++) await sleep(50);
    await sleep(500);
    const second = await post('Second');
    expect(second.status).toBe(201);
    await blocker.query('commit');
    const names = (s: OpenedStream) => s.changes().map((e) => (e.change.item as { name: string }).name);
    for (const s of streams) await s.until((x) => names(x).length >= 2, 10_000);
    for (const s of streams) expect(names(s)).toEqual(['First', 'Second']);
  });

  it('does not read for a stream that closed while its read waited for a turn', async () => {
    const c = await tenStreams();
    blocker = await holdSeriesLock();
    await t.http().post('/api/people').set('Authorization', c.auth).send({ name: 'Woke them' }).expect(201);
    // Five reads run (each waiting on the lock), five wait for a turn in the hub.
    for (let i = 0; i < 100 && (await waitingOnLock(blocker)) < 5; i++) await sleep(50);
    expect(await waitingOnLock(blocker)).toBe(5);
    for (const s of streams.splice(0)) s.close();
    await sleep(300);
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
      expect(await waitingOnLock(blocker)).toBe(0);
      await behind.query('commit');
    } finally {
      await behind.end();
    }
  });
});
