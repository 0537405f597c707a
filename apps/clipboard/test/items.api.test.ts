import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { pollUntil } from '@app/devstack';
import { startTestApp, type Caller, type TestApp } from './helpers/harness.js';
import { HIGH_LIMITS, addItems, countRows, listAll } from './helpers/factories.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp(HIGH_LIMITS);
});
afterAll(() => t.close());

const item = (content: string, extra: Record<string, unknown> = {}) => ({
  type: 'text',
  content,
  source: 'api',
  ...extra,
});

describe('POST /api/clipboard', () => {
  let c: Caller;
  beforeAll(async () => {
    c = await t.caller();
  });

  it('creates an item and answers 201 with it', async () => {
    const res = await t
      .http()
      .post('/api/clipboard')
      .set('Authorization', c.auth)
      .send(item('hello world'))
      .expect(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      type: 'text',
      content: 'hello world',
      source: 'api',
      favorite: false,
      sensitive: false,
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/),
      updatedAt: expect.any(String),
    });
    const row = await t.db.selectFrom('items').selectAll().where('id', '=', res.body.id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ account_id: c.accountId, content: 'hello world', type: 'text', source: 'api' });
  });

  it('accepts every documented type and keeps content exactly, whitespace included', async () => {
    for (const [type, content] of [
      ['url', 'https://example.com/a?b=c'],
      ['html', '<b>x</b>'],
      ['rtf', '{\\rtf1 x}'],
      ['code', '  const x = 1;\n'],
    ]) {
      const res = await t
        .http()
        .post('/api/clipboard')
        .set('Authorization', c.auth)
        .send({ type, content, source: 'desktop' })
        .expect(201);
      expect(res.body).toMatchObject({ type, content, source: 'desktop' });
    }
  });

  it('moves an identical item to the top instead of duplicating it, keeping its id and favorite flag', async () => {
    const other = await t.caller();
    const [first] = await addItems(t, other, ['same text']);
    await t.http().patch(`/api/clipboard/${first}/favorite`).set('Authorization', other.auth).expect(200);
    await addItems(t, other, ['something newer']);
    const again = await t
      .http()
      .post('/api/clipboard')
      .set('Authorization', other.auth)
      .send({ type: 'text', content: 'same text', source: 'cli' })
      .expect(200);
    expect(again.body).toMatchObject({ id: first, favorite: true, source: 'cli' });
    const list = await listAll(t, other);
    expect(list.map((i) => i.content)).toEqual(['same text', 'something newer']);
    expect(await countRows(t, 'items', other.accountId)).toBe(2);
  });

  it('treats the same content with another type as a different item', async () => {
    const other = await t.caller();
    await addItems(t, other, ['https://example.com']);
    await t
      .http()
      .post('/api/clipboard')
      .set('Authorization', other.auth)
      .send({ type: 'url', content: 'https://example.com', source: 'api' })
      .expect(201);
    expect(await countRows(t, 'items', other.accountId)).toBe(2);
  });

  it('creates one item when the same content is posted concurrently', async () => {
    const other = await t.caller();
    const results = await Promise.all(
      Array.from({ length: 6 }, () =>
        t.http().post('/api/clipboard').set('Authorization', other.auth).send(item('raced')),
      ),
    );
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    expect(results.filter((r) => r.status === 200)).toHaveLength(5);
    expect(new Set(results.map((r) => r.body.id)).size).toBe(1);
    expect(await countRows(t, 'items', other.accountId)).toBe(1);
  });

  it('gives concurrent creates on one account distinct seqs, each pruning beyond the history limit exactly once', async () => {
    const other = await t.caller();
    await t.http().put('/api/settings').set('Authorization', other.auth).send({ historyLimit: 10 }).expect(200);
    const created = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        t
          .http()
          .post('/api/clipboard')
          .set('Authorization', other.auth)
          .send(item(`burst ${i}`))
          .expect(201),
      ),
    );
    const ids = created.map((r) => r.body.id as string);
    const pull = await t.http().get('/api/clipboard/pull?limit=500').set('Authorization', other.auth).expect(200);
    const changes = pull.body.changes as Array<{ seq: number; entity: string; id: string; op: string }>;
    // One settings change, 20 creates, 10 prunes: seqs 1..31, none shared; a pruned item keeps only its tombstone.
    expect(new Set(changes.map((ch) => ch.seq)).size).toBe(changes.length);
    expect(Math.max(...changes.map((ch) => ch.seq))).toBe(31);
    const items = changes.filter((ch) => ch.entity === 'item');
    const kept = items.filter((ch) => ch.op === 'upsert').map((ch) => ch.id);
    const pruned = items.filter((ch) => ch.op === 'delete').map((ch) => ch.id);
    expect(kept).toHaveLength(10);
    expect(pruned).toHaveLength(10);
    expect([...kept, ...pruned].sort()).toEqual([...ids].sort());
    expect((await listAll(t, other)).map((i) => i.id).sort()).toEqual([...kept].sort());
    const state = await t.db
      .selectFrom('account_state')
      .select(['seq', 'non_favorites'])
      .where('account_id', '=', other.accountId)
      .executeTakeFirstOrThrow();
    expect(state).toEqual({ seq: 31, non_favorites: 10 });
  });

  it('keeps the stored count of non-favorites exact through creates, repeats of a favorite, favorites, deletes and prunes', async () => {
    const other = await t.caller();
    await t.http().put('/api/settings').set('Authorization', other.auth).send({ historyLimit: 10 }).expect(200);
    const [a] = await addItems(t, other, ['a', 'b']);
    await t
      .http()
      .patch(`/api/clipboard/${a}/favorite`)
      .set('Authorization', other.auth)
      .send({ favorite: true })
      .expect(200);
    // The favorite again: moved to the top, still a favorite. Then the history fills up and 'b' is pruned.
    expect((await t.http().post('/api/clipboard').set('Authorization', other.auth).send(item('a'))).status).toBe(200);
    const fill = Array.from({ length: 9 }, (_, i) => `c${i + 1}`);
    const filled = await addItems(t, other, [...fill, 'x']);
    await t.http().delete(`/api/clipboard/${filled[4]}`).set('Authorization', other.auth).expect(200);
    await addItems(t, other, ['y']);
    const { rows } = await sql<{ stored: number; counted: number }>`
      select s.non_favorites as stored, (select count(*)::int from items i where i.account_id = s.account_id and not i.favorite) as counted
      from account_state s where s.account_id = ${other.accountId}`.execute(t.db);
    expect(rows[0]).toEqual({ stored: 10, counted: 10 });
    const expected = ['y', 'x', ...fill.filter((c) => c !== 'c5').reverse(), 'a'];
    expect((await listAll(t, other)).map((i) => i.content)).toEqual(expected);
  });

  it('commits concurrent creates of one account together, each with its own seq and place in the history', async () => {
    const other = await t.caller();
    await addItems(t, other, ['before']);
    // Hold the account's lock, so the first create waits in Postgres while the rest arrive.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const isLocked = new Promise<void>((resolve) => (locked = resolve));
    const holder = t.db.transaction().execute(async (trx) => {
      await sql`select 1 from account_state where account_id = ${other.accountId} for update`.execute(trx);
      locked();
      await released;
    });
    await isLocked;
    const creates = Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        t
          .http()
          .post('/api/clipboard')
          .set('Authorization', other.auth)
          .send(item(`together ${i}`))
          .expect(201),
      ),
    );
    const waiting = async () =>
      (
        await sql<{
          n: number;
        }>`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and query like '%create_item%'`.execute(
          t.db,
        )
      ).rows[0]!.n;
    // A create waits for the account's lock.
    expect(await pollUntil(waiting, (n) => n > 0, { timeoutMs: 10_000, everyMs: 20 })).toBeGreaterThan(0);
    await new Promise((r) => setTimeout(r, 500));
    release();
    await holder;
    const results = await creates;
    expect(new Set(results.map((r) => r.body.id)).size).toBe(30);
    // The ones that arrived while the first waited went together: fewer transactions than creates.
    const { rows } = await sql<{
      txs: number;
    }>`select count(distinct xmin::text)::int as txs from items where account_id = ${other.accountId} and content like 'together %'`.execute(
      t.db,
    );
    expect(rows[0]!.txs).toBeLessThan(30);
    // Each create advanced the seq once; the history's order is the order the changes were logged.
    const state = await t.db
      .selectFrom('account_state')
      .select(['seq', 'non_favorites'])
      .where('account_id', '=', other.accountId)
      .executeTakeFirstOrThrow();
    expect(state).toEqual({ seq: 31, non_favorites: 31 });
    const pull = await t.http().get('/api/clipboard/pull?limit=500').set('Authorization', other.auth).expect(200);
    const bySeqDesc = (pull.body.changes as Array<{ seq: number; id: string }>)
      .sort((a, b) => b.seq - a.seq)
      .map((ch) => ch.id);
    expect((await listAll(t, other)).map((i) => i.id)).toEqual(bySeqDesc);
  });

  it('prunes through the index, never scanning the items table, for an account that holds most of it', async () => {
    const big = await t.caller();
    await addItems(t, big, ['first']);
    await sql`insert into items (id, account_id, type, content, source, created_at, updated_at)
      select gen_random_uuid(), ${big.accountId}, 'text', 'old ' || n, 'api', now() - n * interval '1 second', now() - n * interval '1 second'
      from generate_series(1, 30000) n`.execute(t.db);
    // And ten that a 30-day retention will prune.
    await sql`update items set created_at = now() - interval '40 days' where id in (
      select id from items where account_id = ${big.accountId} order by created_at limit 10)`.execute(t.db);
    await sql`analyze items`.execute(t.db);
    // Counted around the call: a backend's counts may still hold an earlier statement's scans
    // (pending statistics are flushed at most once a second).
    const seqScans = async (db: typeof t.db) =>
      Number(
        (
          await sql<{
            seq_scan: string;
          }>`select seq_scan from pg_stat_xact_user_tables where relid = 'items'::regclass`.execute(db)
        ).rows[0]!.seq_scan,
      );
    const scans = async (rules: { retentionDays: number; historyLimit: number }) =>
      t.db.transaction().execute(async (trx) => {
        await sql`update account_state set retention_days = ${rules.retentionDays}, history_limit = ${rules.historyLimit} where account_id = ${big.accountId}`.execute(
          trx,
        );
        const before = await seqScans(trx);
        await sql`select * from create_item(${big.accountId}, gen_random_uuid(), 'text', ${`probe ${JSON.stringify(rules)}`}, 'api', 30, false, null, null)`.execute(
          trx,
        );
        return (await seqScans(trx)) - before;
      });
    const count = async () => {
      const { rows } = await sql<{
        n: number;
      }>`select count(*)::int as n from items where account_id = ${big.accountId}`.execute(t.db);
      return rows[0]!.n;
    };
    // Without retention; with a 30-day retention that prunes the ten oldest; then with a history
    // limit four below what the account will hold.
    expect(await scans({ retentionDays: 0, historyLimit: 100_000 })).toBe(0);
    expect(await scans({ retentionDays: 30, historyLimit: 100_000 })).toBe(0);
    expect(await count()).toBe(30_000 + 3 - 10);
    expect(await scans({ retentionDays: 0, historyLimit: 29_990 })).toBe(0);
    expect(await count()).toBe(29_990);
  });

  it("prunes by key, not by reading the account, when the statistics predate the account's growth", async () => {
    const grown = await t.caller();
    await addItems(t, grown, ['first']);
    // Statistics taken while the account held one item; it then grows to 20,001 (the counting
    // triggers keep its count), and its limit is what it holds, so each create prunes one.
    await sql`analyze items`.execute(t.db);
    await sql`insert into items (id, account_id, type, content, source, created_at, updated_at)
      select gen_random_uuid(), ${grown.accountId}, 'text', 'grown ' || n, 'api', now() - n * interval '1 second', now() - n * interval '1 second'
      from generate_series(1, 20000) n`.execute(t.db);
    await sql`update account_state set history_limit = non_favorites where account_id = ${grown.accountId}`.execute(
      t.db,
    );
    // Entries of the items indexes read by three creates, counted in their own transaction (see above).
    const entriesRead = await t.db.transaction().execute(async (trx) => {
      const read = async () =>
        Number(
          (
            await sql<{
              n: string;
            }>`select sum(pg_stat_get_xact_tuples_returned(indexrelid)) as n from pg_index where indrelid = 'items'::regclass`.execute(
              trx,
            )
          ).rows[0]!.n,
        );
      const before = await read();
      for (let i = 0; i < 3; i++)
        await sql`select * from create_item(${grown.accountId}, gen_random_uuid(), 'text', ${`grown probe ${i}`}, 'api', 30, false, null, null)`.execute(
          trx,
        );
      return (await read()) - before;
    });
    // Each finds its one victim at the oldest end of an ordered index and deletes it by primary
    // key; before, the dedup, the victims query and the DELETE each read all 20,001 entries.
    expect(entriesRead).toBeLessThan(30);
    expect(await countRows(t, 'items', grown.accountId)).toBe(20_001);
  });

  it('dedups among creates committed together: each content once, later copies move it', async () => {
    const other = await t.caller();
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        t
          .http()
          .post('/api/clipboard')
          .set('Authorization', other.auth)
          .send(item(`twice ${i % 10}`)),
      ),
    );
    expect(results.filter((r) => r.status === 201)).toHaveLength(10);
    expect(results.filter((r) => r.status === 200)).toHaveLength(20);
    for (let k = 0; k < 10; k++) {
      const same = results.filter((r) => r.body.content === `twice ${k}`);
      expect(same).toHaveLength(3);
      expect(new Set(same.map((r) => r.body.id)).size).toBe(1);
    }
    expect(await countRows(t, 'items', other.accountId)).toBe(10);
    const state = await t.db
      .selectFrom('account_state')
      .select(['seq', 'non_favorites'])
      .where('account_id', '=', other.accountId)
      .executeTakeFirstOrThrow();
    expect(state).toEqual({ seq: 30, non_favorites: 10 });
  });

  it.each([
    ['a missing body', undefined, /^Invalid request body: type is required; content is required; source is required$/],
    ['an array', [item('x')], /body must be object/],
    ['a missing field', { type: 'text', content: 'x' }, /source is required/],
    ['an unknown field', item('x', { favorite: true }), /favorite is not an allowed property/],
    ['an unknown type', item('x', { type: 'image' }), /type must be one of: text, url, html, rtf, code/],
    ['empty content', item(''), /content must NOT have fewer than 1 characters/],
    ['content over 131072 characters', item('x'.repeat(131_073)), /content must NOT have more than 131072 characters/],
    ['content of the wrong type', item('x', { content: 42 }), /content must be string/],
    ['a NUL byte', item('a\u0000b'), /content must not contain NUL/],
    ['an upper-case source', item('x', { source: 'API' }), /source must match pattern/],
    ['a source over 64 characters', item('x', { source: 'a'.repeat(65) }), /source must match pattern/],
    ['a url that is not absolute', { type: 'url', content: 'example.com/page', source: 'api' }, /absolute URL/],
    ['a url with spaces', { type: 'url', content: 'https://exa mple.com', source: 'api' }, /absolute URL/],
  ])('refuses %s with 400 and a specific message', async (_name, body, message) => {
    const req = t.http().post('/api/clipboard').set('Authorization', c.auth);
    const res = await (body === undefined ? req : req.send(body as object)).expect(400);
    expect(res.body).toEqual({ error: expect.stringMatching(message) });
  });

  it('accepts content of exactly 131072 characters', async () => {
    await t
      .http()
      .post('/api/clipboard')
      .set('Authorization', c.auth)
      .send(item('y'.repeat(131_072)))
      .expect(201);
  });
});

describe('GET /api/clipboard', () => {
  let c: Caller;
  let ids: string[];
  beforeAll(async () => {
    c = await t.caller();
    ids = await addItems(t, c, ['one', 'two', 'three', 'four', 'five']);
  });

  it('lists newest first with hasMore, paging by limit and offset', async () => {
    const first = await t.http().get('/api/clipboard?limit=2').set('Authorization', c.auth).expect(200);
    expect(first.body.items.map((i: any) => i.content)).toEqual(['five', 'four']);
    expect(first.body.hasMore).toBe(true);
    const last = await t.http().get('/api/clipboard?limit=2&offset=4').set('Authorization', c.auth).expect(200);
    expect(last.body).toEqual({ items: [expect.objectContaining({ id: ids[0], content: 'one' })], hasMore: false });
    const exact = await t.http().get('/api/clipboard?limit=5').set('Authorization', c.auth).expect(200);
    expect(exact.body.hasMore).toBe(false);
    const beyond = await t.http().get('/api/clipboard?offset=100000').set('Authorization', c.auth).expect(200);
    expect(beyond.body).toEqual({ items: [], hasMore: false });
  });

  it('defaults to 50 items from offset 0', async () => {
    const other = await t.caller();
    await t.db
      .insertInto('items')
      .values(
        Array.from({ length: 51 }, (_, i) => ({
          id: randomUUID(),
          account_id: other.accountId,
          type: 'text',
          content: `n${i}`,
          source: 'api',
          created_at: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
        })),
      )
      .execute();
    const res = await t.http().get('/api/clipboard').set('Authorization', other.auth).expect(200);
    expect(res.body.items).toHaveLength(50);
    expect(res.body.items[0].content).toBe('n50');
    expect(res.body.hasMore).toBe(true);
  });

  it('breaks ties of equal createdAt by id, descending', async () => {
    const other = await t.caller();
    const at = '2026-01-01T00:00:00Z';
    const tied = [randomUUID(), randomUUID(), randomUUID()];
    await t.db
      .insertInto('items')
      .values(
        tied.map((id, i) => ({
          id,
          account_id: other.accountId,
          type: 'text',
          content: `t${i}`,
          source: 'api',
          created_at: at,
        })),
      )
      .execute();
    const res = await t.http().get('/api/clipboard').set('Authorization', other.auth).expect(200);
    expect(res.body.items.map((i: any) => i.id)).toEqual([...tied].sort().reverse());
  });

  it('filters by favorite when asked', async () => {
    await t.http().patch(`/api/clipboard/${ids[1]}/favorite`).set('Authorization', c.auth).expect(200);
    const favorites = await t.http().get('/api/clipboard?favorite=true').set('Authorization', c.auth).expect(200);
    expect(favorites.body.items.map((i: any) => i.id)).toEqual([ids[1]]);
    const others = await t.http().get('/api/clipboard?favorite=false').set('Authorization', c.auth).expect(200);
    expect(others.body.items).toHaveLength(4);
    await t.http().patch(`/api/clipboard/${ids[1]}/favorite`).set('Authorization', c.auth).expect(200);
  });

  it("never shows another account's items", async () => {
    const other = await t.caller();
    const res = await t.http().get('/api/clipboard').set('Authorization', other.auth).expect(200);
    expect(res.body).toEqual({ items: [], hasMore: false });
  });

  it('ignores unknown query parameters', async () => {
    await t.http().get('/api/clipboard?limit=1&sort=whatever').set('Authorization', c.auth).expect(200);
  });

  it.each([
    ['limit=0', /limit must be >= 1/],
    ['limit=501', /limit must be <= 500/],
    ['limit=-1', /limit must be >= 1/],
    ['limit=1.5', /limit must be integer/],
    ['limit=abc', /limit must be integer/],
    ['limit=', /limit must be integer/],
    ['limit=1&limit=2', /limit must be integer/],
    ['limit=99999999999999999999', /limit must be <= 500/],
    ['offset=-1', /offset must be >= 0/],
    ['offset=100001', /offset must be <= 100000/],
    ['offset=2.5', /offset must be integer/],
    ['offset=x', /offset must be integer/],
    ['offset=1e400', /offset must be a finite number/],
    ['favorite=yes', /favorite must be boolean/],
  ])('refuses %s with 400', async (query, message) => {
    const res = await t.http().get(`/api/clipboard?${query}`).set('Authorization', c.auth).expect(400);
    expect(res.body).toEqual({ error: expect.stringMatching(message) });
  });
});

describe('PATCH /api/clipboard/:id/favorite', () => {
  let c: Caller;
  let id: string;
  beforeAll(async () => {
    c = await t.caller();
    [id] = (await addItems(t, c, ['fav me'])) as [string];
  });

  it('toggles the flag without a body and returns the item', async () => {
    const on = await t.http().patch(`/api/clipboard/${id}/favorite`).set('Authorization', c.auth).expect(200);
    expect(on.body).toMatchObject({ id, favorite: true });
    const off = await t.http().patch(`/api/clipboard/${id}/favorite`).set('Authorization', c.auth).send({}).expect(200);
    expect(off.body).toMatchObject({ id, favorite: false });
    expect(off.body.updatedAt >= on.body.updatedAt).toBe(true);
  });

  it('sets the flag explicitly with {favorite}, so a retry does not flip it back', async () => {
    for (let i = 0; i < 2; i++) {
      const res = await t
        .http()
        .patch(`/api/clipboard/${id}/favorite`)
        .set('Authorization', c.auth)
        .send({ favorite: true })
        .expect(200);
      expect(res.body.favorite).toBe(true);
    }
    const row = await t.db.selectFrom('items').select('favorite').where('id', '=', id).executeTakeFirstOrThrow();
    expect(row.favorite).toBe(true);
  });

  it("answers 404 for an unknown id, a non-UUID id and another account's item", async () => {
    const other = await t.caller();
    for (const [who, path] of [
      [c, `/api/clipboard/${randomUUID()}/favorite`],
      [c, '/api/clipboard/not-a-uuid/favorite'],
      [other, `/api/clipboard/${id}/favorite`],
    ] as const) {
      const res = await t.http().patch(path).set('Authorization', who.auth).expect(404);
      expect(res.body).toEqual({ error: 'Clipboard item not found' });
    }
  });

  it('refuses a body with a wrong type or unknown field with 400', async () => {
    const wrong = await t
      .http()
      .patch(`/api/clipboard/${id}/favorite`)
      .set('Authorization', c.auth)
      .send({ favorite: 'yes' })
      .expect(400);
    expect(wrong.body.error).toMatch(/favorite must be boolean/);
    const unknown = await t
      .http()
      .patch(`/api/clipboard/${id}/favorite`)
      .set('Authorization', c.auth)
      .send({ starred: true })
      .expect(400);
    expect(unknown.body.error).toMatch(/starred is not an allowed property/);
  });
});

describe('DELETE /api/clipboard/:id', () => {
  it('deletes one item and answers {deleted: 1}; a second delete is 404', async () => {
    const c = await t.caller();
    const [a, b] = (await addItems(t, c, ['a', 'b'])) as [string, string];
    await t.http().delete(`/api/clipboard/${a}`).set('Authorization', c.auth).expect(200, { deleted: 1 });
    expect((await listAll(t, c)).map((i) => i.id)).toEqual([b]);
    await t.http().delete(`/api/clipboard/${a}`).set('Authorization', c.auth).expect(404);
  });

  it("answers 404 for a non-UUID id and for another account's item, which stays", async () => {
    const c = await t.caller();
    const other = await t.caller();
    const [a] = (await addItems(t, c, ['mine'])) as [string];
    await t.http().delete('/api/clipboard/12345').set('Authorization', c.auth).expect(404);
    await t.http().delete(`/api/clipboard/${a}`).set('Authorization', other.auth).expect(404);
    expect(await countRows(t, 'items', c.accountId)).toBe(1);
  });
});

describe('DELETE /api/clipboard/bulk', () => {
  it('deletes the named items, favorites included, counting each once', async () => {
    const c = await t.caller();
    const [a, b, keep] = (await addItems(t, c, ['a', 'b', 'keep'])) as [string, string, string];
    await t.http().patch(`/api/clipboard/${b}/favorite`).set('Authorization', c.auth).expect(200);
    const res = await t
      .http()
      .delete('/api/clipboard/bulk')
      .set('Authorization', c.auth)
      .send({ ids: [a, b, a.toUpperCase(), randomUUID()] })
      .expect(200);
    expect(res.body).toEqual({ deleted: 2 });
    expect((await listAll(t, c)).map((i) => i.id)).toEqual([keep]);
  });

  it("neither deletes nor counts another account's items", async () => {
    const c = await t.caller();
    const other = await t.caller();
    const [theirs] = (await addItems(t, other, ['theirs'])) as [string];
    await t
      .http()
      .delete('/api/clipboard/bulk')
      .set('Authorization', c.auth)
      .send({ ids: [theirs] })
      .expect(200, { deleted: 0 });
    expect(await countRows(t, 'items', other.accountId)).toBe(1);
  });

  it('accepts 500 ids', async () => {
    const c = await t.caller();
    const ids = Array.from({ length: 500 }, () => randomUUID());
    await t.http().delete('/api/clipboard/bulk').set('Authorization', c.auth).send({ ids }).expect(200, { deleted: 0 });
  });

  it.each([
    ['no body', undefined, /ids/],
    ['an empty list', { ids: [] }, /ids must NOT have fewer than 1 items/],
    ['501 ids', { ids: Array.from({ length: 501 }, () => randomUUID()) }, /ids must NOT have more than 500 items/],
    ['a non-UUID id', { ids: ['abc'] }, /ids\/0 must match pattern/],
    ['a urn UUID', { ids: [`urn:uuid:${randomUUID()}`] }, /ids\/0 must match pattern/],
    ['ids that are not a list', { ids: randomUUID() }, /ids must be array/],
    ['an unknown field', { ids: [randomUUID()], all: true }, /all is not an allowed property/],
  ])('refuses %s with 400', async (_name, body, message) => {
    const c = await t.caller();
    const req = t.http().delete('/api/clipboard/bulk').set('Authorization', c.auth);
    const res = await (body === undefined ? req : req.send(body)).expect(400);
    expect(res.body.error).toMatch(message);
  });
});

describe('DELETE /api/clipboard', () => {
  it('deletes every non-favorite and keeps favorites', async () => {
    const c = await t.caller();
    const other = await t.caller();
    await addItems(t, other, ['untouched']);
    const [a, b, c3] = (await addItems(t, c, ['a', 'b', 'c'])) as [string, string, string];
    await t.http().patch(`/api/clipboard/${b}/favorite`).set('Authorization', c.auth).expect(200);
    const res = await t.http().delete('/api/clipboard').set('Authorization', c.auth).expect(200);
    expect(res.body).toEqual({ deleted: 2 });
    expect((await listAll(t, c)).map((i) => i.id)).toEqual([b]);
    expect(await countRows(t, 'items', other.accountId)).toBe(1);
    expect([a, c3]).not.toContain(b);
    await t.http().delete('/api/clipboard').set('Authorization', c.auth).expect(200, { deleted: 0 });
  });
});
