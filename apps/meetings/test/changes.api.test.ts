import { createHash } from 'node:crypto';
import { cursorSigner, encodeWindowCursor } from '@app/auth/streams';
import { clusterSettledPast } from '@app/devstack';
import { sql } from 'kysely';
import { readChangePages } from '../src/domain/changes.service.js';
import { addItem, createPerson, createSeries, sessionOf, startApp } from './helpers/factories.js';
import type { Caller, TestApp } from './helpers/harness.js';

/** The meetings feed's signer (changes.service.ts), to make cursors of its own. */
const FEED = cursorSigner('meetings', 'changes');
/** The feed's unkeyed checksum before cursors were signed: what a client could recompute. */
const OLD_LABEL = 'meetings-changes-v1';

let t: TestApp;
beforeAll(async () => {
  t = await startApp();
});
afterAll(() => t.close());

interface Change {
  type: 'upsert' | 'delete';
  kind: 'note' | 'person' | 'series' | 'meeting';
  id: string;
  item: Record<string, any> | null;
}
interface Page {
  changes: Change[];
  nextCursor: string;
  hasMore: boolean;
}

async function page(c: Caller | string, query: Record<string, string | number> = {}): Promise<Page> {
  const req = t.http().get('/api/changes').query(query);
  if (typeof c === 'string') req.set('Cookie', c);
  else req.set('Authorization', c.auth);
  return (await req.expect(200)).body as Page;
}

/**
 * Follows nextCursor until `done` holds for what was gathered. A change shows once every older
 * transaction of the cluster has ended (the test files beside this one share it): a moment after
 * its commit, never before it.
 */
async function catchUp(
  c: Caller,
  cursor: string | undefined,
  done: (changes: Change[]) => boolean,
  limit = 100,
): Promise<{ changes: Change[]; cursor: string }> {
  const all: Change[] = [];
  const deadline = Date.now() + 30_000;
  for (;;) {
    const p = await page(c, { ...(cursor ? { cursor } : {}), limit });
    all.push(...p.changes);
    cursor = p.nextCursor;
    if (!p.hasMore && done(all)) return { changes: all, cursor };
    if (Date.now() > deadline)
      throw new Error(`the feed did not catch up: ${JSON.stringify(all.map((ch) => `${ch.kind}:${ch.id}`))}`);
    if (!p.hasMore) await new Promise((r) => setTimeout(r, 30));
  }
}

/** The feed's place of a note: the transaction that last wrote it, and its row's id. */
async function stampOf(c: Caller, date: string): Promise<{ xid: string; id: string }> {
  const { rows } = await sql<{
    xid: string;
    id: string;
  }>`select change_xid::text as xid, id from notes where account_id = ${c.accountId} and date = ${date}`.execute(t.db);
  return rows[0]!;
}

const has =
  (kind: Change['kind'], id: string, type: Change['type'] = 'upsert') =>
  (changes: Change[]) =>
    changes.some((ch) => ch.kind === kind && ch.id === id && ch.type === type);
const all =
  (...checks: Array<(changes: Change[]) => boolean>) =>
  (changes: Change[]) =>
    checks.every((check) => check(changes));

const revisions = new Map<string, number>();

async function putNote(c: Caller, date: string, today: string): Promise<any> {
  const key = `${c.accountId}/${date}`;
  const base = revisions.get(key);
  const body = {
    yesterday: 'y',
    today,
    impediments: [],
    todayPriority: 'p',
    ...(base !== undefined ? { baseRevision: base } : {}),
  };
  const res = await t.http().put(`/api/notes/${date}`).set('Authorization', c.auth).send(body);
  expect([200, 201]).toContain(res.status);
  revisions.set(key, res.body.revision as number);
  return res.body;
}

describe('GET /api/changes', () => {
  it('starts with every record of the account, meetings with their items, and nothing of another account', async () => {
    const c = await t.caller();
    const other = await t.caller();
    await createPerson(t, other, 'Not yours');
    const { series, meetings, person } = await createSeries(t, c);
    const item = await addItem(t, c, meetings[0].id, { text: 'Roadmap' });
    await putNote(c, '2030-01-02', 'ship it');
    const { changes } = await catchUp(
      c,
      undefined,
      all(
        has('person', person.id),
        has('series', series.id),
        has('meeting', meetings[1].id),
        has('note', '2030-01-02'),
      ),
    );
    expect(changes.map((ch) => ch.kind).sort()).toEqual(['meeting', 'meeting', 'note', 'person', 'series']);
    const meeting = changes.find((ch) => ch.id === meetings[0].id)!;
    expect(meeting.item).toMatchObject({
      id: meetings[0].id,
      seriesId: series.id,
      items: [expect.objectContaining({ id: item.id, text: 'Roadmap' })],
    });
    expect(meeting.item).not.toHaveProperty('privateNotes');
    expect(changes.find((ch) => ch.kind === 'note')!.item).toMatchObject({ date: '2030-01-02', today: 'ship it' });
    expect(changes.find((ch) => ch.kind === 'series')!.item).toMatchObject({ id: series.id, title: '1:1 with Ada' });
  });

  it('then gives each changed record once, in its latest state, and deletes as tombstones', async () => {
    const c = await t.caller();
    const { meetings, person } = await createSeries(t, c);
    await putNote(c, '2030-02-01', 'first');
    const start = await catchUp(c, undefined, all(has('person', person.id), has('note', '2030-02-01')));
    await putNote(c, '2030-02-01', 'second');
    await putNote(c, '2030-02-01', 'third');
    await t.http().delete(`/api/meetings/${meetings[1].id}`).set('Authorization', c.auth).expect(204);
    const item = await addItem(t, c, meetings[0].id, { text: 'New point' });
    await t
      .http()
      .delete(`/api/people/${person.id}`)
      .set('Authorization', c.auth)
      .expect((r) => expect(r.status).toBeLessThan(300));
    await t.http().delete('/api/notes/2030-02-01').set('Authorization', c.auth).expect(204);
    const { changes, cursor } = await catchUp(
      c,
      start.cursor,
      all(
        has('note', '2030-02-01', 'delete'),
        has('meeting', meetings[1].id, 'delete'),
        has('meeting', meetings[0].id),
        has('person', person.id),
      ),
    );
    expect(changes.filter((ch) => ch.kind === 'note')).toEqual([
      { type: 'delete', kind: 'note', id: '2030-02-01', item: null },
    ]);
    expect(changes.filter((ch) => ch.id === meetings[1].id)).toEqual([
      { type: 'delete', kind: 'meeting', id: meetings[1].id, item: null },
    ]);
    expect(changes.find((ch) => ch.id === meetings[0].id)!.item!.items).toEqual([
      expect.objectContaining({ id: item.id }),
    ]);
    expect(changes.find((ch) => ch.id === person.id)!.item).toMatchObject({ archived: true });
    // Nothing more: each change once. (From the cursor that ended the catch-up of every write: a
    // fresh read from `start` may stop early at the horizon, while any transaction in the cluster
    // is open, e.g. a parallel test file's, and leave later changes to a next page.)
    const again = await page(c, { cursor });
    expect(again.changes).toEqual([]);
  });

  it('pages with limit and hasMore, and a full sync of a fresh account leaves out old tombstones', async () => {
    const c = await t.caller();
    for (let i = 1; i <= 5; i++) await putNote(c, `2030-03-0${i}`, `n${i}`);
    await t.http().delete('/api/notes/2030-03-05').set('Authorization', c.auth).expect(204);
    // The tombstone is old once no transaction of the cluster that began before it is open (a
    // parallel test file's may be): until then the sync's first window ends below it, and it is
    // handed out as a change after that window, as it must be.
    await clusterSettledPast(t.db, (await stampOf(c, '2030-03-05')).xid);
    const { changes } = await catchUp(c, undefined, (ch) => ch.length >= 4, 2);
    expect(changes.map((ch) => `${ch.type}:${ch.id}`)).toEqual([
      'upsert:2030-03-01',
      'upsert:2030-03-02',
      'upsert:2030-03-03',
      'upsert:2030-03-04',
    ]);
  });

  it('reads once for streams at different places: each gets the changes after its own, and one past the shared page stays where it is', async () => {
    const c = await t.caller();
    const ids: string[] = [];
    for (let i = 1; i <= 5; i++) ids.push(((await createPerson(t, c, `p${i}`)) as { id: string }).id);
    // The cursor after each change, one change a page.
    const after: string[] = [];
    let cursor: string | undefined;
    const deadline = Date.now() + 30_000;
    while (after.length < 5 && Date.now() < deadline) {
      const p = await page(c, { ...(cursor ? { cursor } : {}), limit: 1 });
      cursor = p.nextCursor;
      if (p.changes.length === 1) after.push(cursor);
      else await new Promise((r) => setTimeout(r, 30));
    }
    expect(after).toHaveLength(5);

    // One read of two changes from the earliest place (after p1): the stream after p4 stands past
    // every change the read hands out while the feed goes on.
    const [early, late] = await readChangePages(t.db, c.accountId, [after[0], after[3]], 2, false);
    expect(early!.changes.map((ch) => ch.id)).toEqual([ids[1], ids[2]]);
    expect(early!.hasMore).toBe(true);
    expect(late!.changes).toEqual([]);
    expect(late!.hasMore).toBe(true);
    // It stays where it was, so its next read starts there: p5, and nothing before it again.
    const { changes } = await catchUp(c, late!.nextCursor, has('person', ids[4]!));
    expect(changes.map((ch) => ch.id)).toEqual([ids[4]]);
  });

  it('keeps its place, and hands out nothing twice, when the horizon steps back behind the cursor', async () => {
    const c = await t.caller();
    // The horizon steps back when a transaction of another database that it left out ends between
    // its snapshot and its read of pg_stat_activity (it then counts). Here an older transaction of
    // this database holds the horizon back, and the cursor is one a page handed out just before:
    // past the horizon, in the middle of the transaction that wrote the note.
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let begun!: () => void;
    const open = new Promise<void>((r) => (begun = r));
    const older = t.db.transaction().execute(async (trx) => {
      await sql`select pg_current_xact_id()`.execute(trx);
      begun();
      await held;
    });
    await open;
    await putNote(c, '2030-04-01', 'once');
    const stamp = await stampOf(c, '2030-04-01');
    const past = encodeWindowCursor(FEED, c.accountId, {
      lo: stamp.xid,
      t: Math.floor(Date.now() / 1000),
      x: stamp.xid,
      i: stamp.id,
    });
    const behind = await page(c, { cursor: past });
    expect(behind).toMatchObject({ changes: [], hasMore: false });
    release();
    await older;
    await clusterSettledPast(t.db, stamp.xid);
    expect((await page(c, { cursor: behind.nextCursor })).changes).toEqual([]);
  });

  it('never misses a change whose transaction commits after a later one (out of order)', async () => {
    const c = await t.caller();
    const early = await createPerson(t, c, 'Early');
    const late = await createPerson(t, c, 'Late');
    const start = await catchUp(c, undefined, all(has('person', early.id), has('person', late.id)));
    // A transaction that begins first (lower id) and commits last, around a write that commits at once.
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const slow = t.db.transaction().execute(async (trx) => {
      await sql`update people set name = 'Early, renamed' where id = ${early.id}`.execute(trx);
      await held;
    });
    await new Promise((r) => setTimeout(r, 50));
    await t
      .http()
      .patch(`/api/people/${late.id}`)
      .set('Authorization', c.auth)
      .send({ name: 'Late, renamed' })
      .expect(200);
    // While the early transaction is open, the feed holds back at its line: the late change waits.
    const meanwhile = await page(c, { cursor: start.cursor });
    expect(meanwhile.changes).toEqual([]);
    release();
    await slow;
    const { changes } = await catchUp(c, meanwhile.nextCursor, all(has('person', early.id), has('person', late.id)));
    expect(changes.map((ch) => ch.item!.name)).toEqual(['Early, renamed', 'Late, renamed']);
  });

  it('rebuilds exactly the records while writers commit in parallel', async () => {
    const c = await t.caller();
    const start = await catchUp(c, undefined, () => true);
    // Six writers at a time: thirty at once queued for the test app's ten connections (a create
    // holds one while it waits for the account's lock) past the pool's timeout beside CI's other
    // lanes (503), which is not what this tests.
    const made: Array<{ id: string }> = [];
    for (let i = 0; i < 30; i += 6)
      made.push(...(await Promise.all([0, 1, 2, 3, 4, 5].map((k) => createPerson(t, c, `P${i + k}`)))));
    const { changes } = await catchUp(c, start.cursor, (ch) => made.every((p) => ch.some((x) => x.id === p.id)), 7);
    expect(new Set(changes.map((ch) => ch.id)).size).toBe(changes.length);
    expect(changes).toHaveLength(30);
  });

  it('shows privateNotes only to a session that asks, never to a key', async () => {
    const c = await t.caller();
    const cookie = await sessionOf(t, c);
    const { meetings } = await createSeries(t, c);
    const current = await t.http().get(`/api/meetings/${meetings[0].id}`).set('Cookie', cookie).expect(200);
    await t
      .http()
      .patch(`/api/meetings/${meetings[0].id}`)
      .set('Cookie', cookie)
      .send({ baseRevision: current.body.revision, privateNotes: 'secret' })
      .expect(200);
    const byKey = await catchUp(c, undefined, has('meeting', meetings[0].id));
    expect(JSON.stringify(byKey.changes)).not.toContain('secret');
    const keyAsking = await page(c, { includePrivate: '1' });
    expect(JSON.stringify(keyAsking.changes)).not.toContain('privateNotes');
    const session = await page(cookie, { includePrivate: '1', limit: 500 });
    expect(session.changes.find((ch) => ch.id === meetings[0].id)!.item).toMatchObject({ privateNotes: 'secret' });
  });

  it('refuses a malformed, altered or foreign cursor (400 invalid_cursor) and an expired one (410)', async () => {
    const c = await t.caller();
    const other = await t.caller();
    const mine = (await page(c)).nextCursor;
    for (const cursor of ['garbage', `${mine}x`, (await page(other)).nextCursor]) {
      const res = await t.http().get('/api/changes').query({ cursor }).set('Authorization', c.auth).expect(400);
      expect(res.body.error.code).toBe('invalid_cursor');
    }
    const old = encodeWindowCursor(FEED, c.accountId, {
      lo: '1',
      t: Math.floor(Date.now() / 1000) - 31 * 86_400,
      x: '1',
      i: '00000000-0000-0000-0000-000000000000',
    });
    const expired = await t.http().get('/api/changes').query({ cursor: old }).set('Authorization', c.auth).expect(410);
    expect(expired.body.error.code).toBe('cursor_expired');
    await t.http().get('/api/changes').query({ limit: 501 }).set('Authorization', c.auth).expect(400);
  });

  it('refuses a cursor re-encoded with another position and its checksum recomputed (400 invalid_cursor): cursors are signed', async () => {
    const c = await t.caller();
    await putNote(c, '2030-05-01', 'placed');
    const mine = (await page(c)).nextCursor;
    const value = JSON.parse(Buffer.from(mine.split('.')[0]!, 'base64url').toString());
    const payload = Buffer.from(JSON.stringify({ ...value, x: '1', lo: '1' })).toString('base64url');
    const digest = (text: string) => createHash('sha256').update(text).digest('base64url').slice(0, 16);
    for (const cursor of [
      `${payload}.${digest(`${OLD_LABEL}.${payload}`)}`,
      `${mine.slice(0, 5)}${mine[5] === 'A' ? 'B' : 'A'}${mine.slice(6)}`,
    ]) {
      const res = await t.http().get('/api/changes').query({ cursor }).set('Authorization', c.auth).expect(400);
      expect(res.body.error.code).toBe('invalid_cursor');
    }
  });

  it('needs meetings:read', async () => {
    const c = await t.caller(['meetings:write']);
    await t.http().get('/api/changes').set('Authorization', c.auth).expect(403);
  });
});
