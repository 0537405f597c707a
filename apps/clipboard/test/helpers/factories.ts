import type { Caller, TestApp } from './harness.js';

/** Env for suites that send many requests; the real limit has its own test file. */
export const HIGH_LIMITS = { RATE_LIMIT_PER_MINUTE: '1000000' };

/** Adds items in order (oldest first) and returns their ids in that order. */
export async function addItems(t: TestApp, c: Caller, contents: string[], type = 'text'): Promise<string[]> {
  const ids: string[] = [];
  for (const content of contents) {
    const res = await t
      .http()
      .post('/api/clipboard')
      .set('Authorization', c.auth)
      .send({ type, content, source: 'api' })
      .expect(201);
    ids.push(res.body.id);
  }
  return ids;
}

/** Every item of the account as the list shows it, newest first. */
export async function listAll(t: TestApp, c: Caller): Promise<any[]> {
  const res = await t.http().get('/api/clipboard?limit=500').set('Authorization', c.auth).expect(200);
  return res.body.items;
}

/** Rows of a table for an account, straight from the database. */
export async function countRows(t: TestApp, table: 'items' | 'snippets', accountId: string): Promise<number> {
  const row = await t.db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
