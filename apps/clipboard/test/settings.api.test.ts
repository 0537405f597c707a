import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { startTestApp, type TestApp } from './helpers/harness.js';
import { HIGH_LIMITS, addItems, countRows, listAll } from './helpers/factories.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp(HIGH_LIMITS);
});
afterAll(() => t.close());

/** Adds `n` old non-favorite items straight in the database, one minute apart, oldest first. */
async function seed(accountId: string, n: number, startIso = '2026-01-01T00:00:00Z'): Promise<string[]> {
  const start = Date.parse(startIso);
  const rows = Array.from({ length: n }, (_, i) => ({
    id: randomUUID(),
    account_id: accountId,
    type: 'text',
    content: `seed ${i}`,
    source: 'api',
    created_at: new Date(start + i * 60_000).toISOString(),
  }));
  // The counter row must exist for the trigger to count the seeded items.
  await t.db
    .insertInto('account_state')
    .values({ account_id: accountId })
    .onConflict((oc) => oc.doNothing())
    .execute();
  await t.db.insertInto('items').values(rows).execute();
  return rows.map((r) => r.id);
}

async function nonFavorites(accountId: string): Promise<number> {
  const row = await t.db
    .selectFrom('account_state')
    .select('non_favorites')
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow();
  return row.non_favorites;
}

describe('GET /api/settings', () => {
  it('answers the defaults for a new account', async () => {
    const c = await t.caller();
    await t.http().get('/api/settings').set('Authorization', c.auth).expect(200, {
      historyLimit: 1000,
      retentionDays: 0,
      captureEnabled: true,
      sensitiveItemTtlSeconds: 60,
      sealSalt: null,
      updatedAt: null,
    });
  });
});

describe('PUT /api/settings', () => {
  it('updates only the fields sent and returns the full settings', async () => {
    const c = await t.caller();
    const res = await t
      .http()
      .put('/api/settings')
      .set('Authorization', c.auth)
      .send({ captureEnabled: false })
      .expect(200);
    expect(res.body).toEqual({
      historyLimit: 1000,
      retentionDays: 0,
      captureEnabled: false,
      sensitiveItemTtlSeconds: 60,
      sealSalt: null,
      updatedAt: expect.any(String),
    });
    const res2 = await t
      .http()
      .put('/api/settings')
      .set('Authorization', c.auth)
      .send({ historyLimit: 50, retentionDays: 7 })
      .expect(200);
    expect(res2.body).toMatchObject({ historyLimit: 50, retentionDays: 7, captureEnabled: false });
    const read = await t.http().get('/api/settings').set('Authorization', c.auth).expect(200);
    expect(read.body).toEqual(res2.body);
    const other = await t.caller();
    await t.http().get('/api/settings').set('Authorization', other.auth).expect(200, {
      historyLimit: 1000,
      retentionDays: 0,
      captureEnabled: true,
      sensitiveItemTtlSeconds: 60,
      sealSalt: null,
      updatedAt: null,
    });
  });

  it.each([
    ['an empty object', {}, /body must NOT have fewer than 1 properties/],
    ['an unknown key', { theme: 'dark' }, /theme is not an allowed property/],
    ['historyLimit below 10', { historyLimit: 9 }, /historyLimit must be >= 10/],
    ['historyLimit above 100000', { historyLimit: 100_001 }, /historyLimit must be <= 100000/],
    ['a fractional historyLimit', { historyLimit: 10.5 }, /historyLimit must be integer/],
    ['a string historyLimit', { historyLimit: '100' }, /historyLimit must be integer/],
    ['a huge historyLimit', { historyLimit: 1e300 }, /historyLimit must be <= 100000/],
    ['negative retentionDays', { retentionDays: -1 }, /retentionDays must be >= 0/],
    ['retentionDays above 3650', { retentionDays: 3651 }, /retentionDays must be <= 3650/],
    ['a non-boolean captureEnabled', { captureEnabled: 'no' }, /captureEnabled must be boolean/],
    ['null', { historyLimit: null }, /historyLimit must be integer/],
  ])('refuses %s with 400 and changes nothing', async (_name, body, message) => {
    const c = await t.caller();
    const res = await t.http().put('/api/settings').set('Authorization', c.auth).send(body).expect(400);
    expect(res.body.error).toMatch(message);
    await t.http().get('/api/settings').set('Authorization', c.auth).expect(200, {
      historyLimit: 1000,
      retentionDays: 0,
      captureEnabled: true,
      sensitiveItemTtlSeconds: 60,
      sealSalt: null,
      updatedAt: null,
    });
  });

  it('refuses a missing body with 400', async () => {
    const c = await t.caller();
    await t.http().put('/api/settings').set('Authorization', c.auth).expect(400);
  });
});

describe('history limit', () => {
  it('prunes the oldest non-favorites at once when lowered, keeping favorites', async () => {
    const c = await t.caller();
    const ids = await seed(c.accountId, 15);
    await t.db.updateTable('items').set({ favorite: true }).where('id', '=', ids[0]!).execute();
    expect(await nonFavorites(c.accountId)).toBe(14);
    await t.http().put('/api/settings').set('Authorization', c.auth).send({ historyLimit: 10 }).expect(200);
    const left = (await listAll(t, c)).map((i) => i.id);
    expect(left).toEqual([...ids.slice(5).reverse(), ids[0]]);
    expect(await nonFavorites(c.accountId)).toBe(10);
  });

  it('prunes on each create, so the history never exceeds the limit', async () => {
    const c = await t.caller();
    await t.http().put('/api/settings').set('Authorization', c.auth).send({ historyLimit: 10 }).expect(200);
    const ids = await addItems(
      t,
      c,
      Array.from({ length: 12 }, (_, i) => `item ${i}`),
    );
    const left = (await listAll(t, c)).map((i) => i.id);
    expect(left).toEqual(ids.slice(2).reverse());
    expect(await countRows(t, 'items', c.accountId)).toBe(10);
    expect(await nonFavorites(c.accountId)).toBe(10);
  });

  it('keeps the counter exact through favorites, deletes and concurrent creates', async () => {
    const c = await t.caller();
    const ids = await addItems(t, c, ['a', 'b', 'c', 'd']);
    await t.http().patch(`/api/clipboard/${ids[0]}/favorite`).set('Authorization', c.auth).expect(200);
    await t.http().delete(`/api/clipboard/${ids[1]}`).set('Authorization', c.auth).expect(200);
    await t
      .http()
      .delete('/api/clipboard/bulk')
      .set('Authorization', c.auth)
      .send({ ids: [ids[0], ids[2]] })
      .expect(200);
    await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        t
          .http()
          .post('/api/clipboard')
          .set('Authorization', c.auth)
          .send({ type: 'text', content: `p${i}`, source: 'api' })
          .expect(201),
      ),
    );
    const { rows } = await sql<{
      n: number;
    }>`select count(*)::int as n from items where account_id = ${c.accountId} and not favorite`.execute(t.db);
    expect(await nonFavorites(c.accountId)).toBe(rows[0]!.n);
    expect(rows[0]!.n).toBe(9);
  });
});

describe('retention', () => {
  it('hides non-favorites past retention from the list and prunes them on the next write', async () => {
    const c = await t.caller();
    const old = await seed(c.accountId, 3, new Date(Date.now() - 10 * 86_400_000).toISOString());
    await t.db.updateTable('items').set({ favorite: true }).where('id', '=', old[0]!).execute();
    const [fresh] = await addItems(t, c, ['fresh']);
    await t.db.updateTable('account_state').set({ retention_days: 5 }).where('account_id', '=', c.accountId).execute();
    // Not yet pruned, but not listed.
    expect((await listAll(t, c)).map((i) => i.id)).toEqual([fresh, old[0]]);
    expect(await countRows(t, 'items', c.accountId)).toBe(4);
    await addItems(t, c, ['trigger']);
    expect(await countRows(t, 'items', c.accountId)).toBe(3);
  });

  it('prunes at once when retentionDays is set', async () => {
    const c = await t.caller();
    await seed(c.accountId, 3, new Date(Date.now() - 40 * 86_400_000).toISOString());
    const [fresh] = await addItems(t, c, ['fresh']);
    await t.http().put('/api/settings').set('Authorization', c.auth).send({ retentionDays: 30 }).expect(200);
    expect((await listAll(t, c)).map((i) => i.id)).toEqual([fresh]);
    expect(await countRows(t, 'items', c.accountId)).toBe(1);
  });
});
