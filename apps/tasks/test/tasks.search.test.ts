import { startTestApp, type Caller, type TestApp } from './helpers/harness.js';
import { TASK_FIELDS, createTask } from './helpers/factories.js';

let t: TestApp;
let c: Caller;
beforeAll(async () => {
  t = await startTestApp({ RATE_LIMIT_PER_MINUTE: '100000' });
  c = await t.caller();
});
afterAll(() => t.close());

const search = (q: string, extra = '', caller: Caller = c) =>
  t
    .http()
    .get(`/api/v1/tasks?q=${encodeURIComponent(q)}${extra}`)
    .set('Authorization', caller.auth);
const ids = (res: { body: { items: { id: string }[] } }) => res.body.items.map((i) => i.id);

describe('GET /api/v1/tasks?q= (full-text search)', () => {
  it('finds tasks by title and notes, ranks title matches first, and stems English words', async () => {
    const inNotes = await createTask(t, c, { title: 'groceries', notes: 'remember the invoices for the accountant' });
    const inTitle = await createTask(t, c, { title: 'Send invoice to ACME', tags: ['work'] });
    await createTask(t, c, { title: 'unrelated' });
    const res = await search('invoice').expect(200);
    expect(ids(res)).toEqual([inTitle.id, inNotes.id]);
    for (const item of res.body.items) expect(Object.keys(item).sort()).toEqual(TASK_FIELDS);
    expect(ids(await search('"send invoice"').expect(200))).toEqual([inTitle.id]);
    expect(ids(await search('invoice -acme').expect(200))).toEqual([inNotes.id]);
  });

  it('ignores view and tag, and returns subtasks and completed tasks as plain tasks', async () => {
    const parent = await createTask(t, c, { title: 'kangaroo parent', tags: ['zoo'] });
    const sub = await createTask(t, c, { title: 'kangaroo food', parentId: parent.id });
    await t.http().post(`/api/v1/tasks/${sub.id}/complete`).set('Authorization', c.auth).expect(200);
    const res = await search('kangaroo', '&view=upcoming&tag=other').expect(200);
    expect(ids(res).sort()).toEqual([parent.id, sub.id].sort());
    for (const item of res.body.items) expect(item.subtasks).toBeUndefined();
  });

  it("leaves out deleted tasks and other workspaces' tasks", async () => {
    const other = await t.caller();
    await createTask(t, other, { title: 'platypus of theirs' });
    const mine = await createTask(t, c, { title: 'platypus deleted' });
    await t.http().delete(`/api/v1/tasks/${mine.id}`).set('Authorization', c.auth).expect(200);
    expect((await search('platypus').expect(200)).body).toEqual({ items: [], nextCursor: null });
  });

  it('pages by rank then id, stably, without gaps or repeats', async () => {
    const made: string[] = [];
    for (let i = 0; i < 9; i += 1) {
      made.push(
        (
          await createTask(t, c, {
            title: i % 3 === 0 ? 'wombat wombat wombat' : `wombat ${i}`,
            notes: i % 2 ? 'wombat' : null,
          })
        ).id,
      );
    }
    const full = ids(await search('wombat', '&limit=200').expect(200));
    expect(full.sort()).toEqual([...made].sort());
    const paged: string[] = [];
    let cursor: string | null = null;
    do {
      const res: any = await search(
        'wombat',
        `&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      ).expect(200);
      expect(res.body.items.length).toBeLessThanOrEqual(2);
      paged.push(...ids(res));
      cursor = res.body.nextCursor;
    } while (cursor);
    expect(paged).toEqual(ids(await search('wombat', '&limit=200').expect(200)));
  });

  it("answers 400 validation_failed for a list cursor on a search, invalid_cursor for another query's cursor", async () => {
    for (let i = 0; i < 3; i += 1) await createTask(t, c, { title: `ocelot ${i}` });
    const listPage = await t.http().get('/api/v1/tasks?limit=1').set('Authorization', c.auth).expect(200);
    const res = await search('ocelot', `&cursor=${encodeURIComponent(listPage.body.nextCursor)}`).expect(400);
    expect(res.body.error.code).toBe('validation_failed');
    const page = await search('ocelot', '&limit=1').expect(200);
    const other = await search('ocelots', `&cursor=${encodeURIComponent(page.body.nextCursor)}`).expect(400);
    expect(other.body.error.code).toBe('invalid_cursor');
  });

  it.each(['', '   ', 'x'.repeat(501)])('answers 400 validation_failed for q=%p', async (q) => {
    expect((await search(q).expect(400)).body.error.code).toBe('validation_failed');
  });

  it('answers 400 for a NUL character and finds nothing for stop words or punctuation only', async () => {
    expect((await search('a\u0000b').expect(400)).body.error.code).toBe('validation_failed');
    expect((await search('the').expect(200)).body.items).toEqual([]);
    expect((await search('!!! & |').expect(200)).body.items).toEqual([]);
  });
});
