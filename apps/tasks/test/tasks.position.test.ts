import { startTestApp, type Caller, type TestApp } from './helpers/harness.js';
import { createTask } from './helpers/factories.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ RATE_LIMIT_PER_MINUTE: '100000' });
});
afterAll(() => t.close());

const move = (c: Caller, id: string, afterId: unknown) =>
  t.http().put(`/api/v1/tasks/${id}/position`).set('Authorization', c.auth).send({ afterId });
const order = async (c: Caller) =>
  (await t.http().get('/api/v1/tasks?view=all&limit=200').set('Authorization', c.auth).expect(200)).body.items.map(
    (i: { title: string }) => i.title,
  );

async function setup(titles: string[]): Promise<{ c: Caller; ids: Record<string, string> }> {
  const c = await t.caller();
  const ids: Record<string, string> = {};
  for (const title of titles) ids[title] = (await createTask(t, c, { title })).id;
  return { c, ids };
}

describe('PUT /api/v1/tasks/{id}/position', () => {
  it('appends new top-level tasks at the end of the manual order', async () => {
    const { c } = await setup(['a', 'b', 'c']);
    expect(await order(c)).toEqual(['a', 'b', 'c']);
  });

  it('gives concurrent creates distinct places at the end', async () => {
    const c = await t.caller();
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        t
          .http()
          .post('/api/v1/tasks')
          .set('Authorization', c.auth)
          .send({ title: `n${i}` }),
      ),
    );
    for (const r of results) expect(r.status).toBe(201);
    const rows = await t.db.selectFrom('tasks').select('position').where('workspace_id', '=', c.workspaceId).execute();
    expect(new Set(rows.map((r) => r.position)).size).toBe(8);
    expect((await order(c)).sort()).toEqual(Array.from({ length: 8 }, (_, i) => `n${i}`));
  });

  it('appends a new task after one just moved to the end, and after one moved to the top', async () => {
    const { c, ids } = await setup(['a', 'b', 'c']);
    await move(c, ids.a!, ids.c).expect(200);
    await t.http().post('/api/v1/tasks').set('Authorization', c.auth).send({ title: 'd' }).expect(201);
    expect(await order(c)).toEqual(['b', 'c', 'a', 'd']);
    await move(c, ids.c!, null).expect(200);
    await t.http().post('/api/v1/tasks').set('Authorization', c.auth).send({ title: 'e' }).expect(201);
    expect(await order(c)).toEqual(['c', 'b', 'a', 'd', 'e']);
  });

  it('moves a task after another and to the top (afterId null), visible in view=all', async () => {
    const { c, ids } = await setup(['a', 'b', 'c', 'd']);
    const res = await move(c, ids.a!, ids.c).expect(200);
    expect(res.body.item).toMatchObject({ id: ids.a, title: 'a' });
    expect(res.headers.etag).toBe(`"${res.body.item.updatedAt}"`);
    expect(await order(c)).toEqual(['b', 'c', 'a', 'd']);
    await move(c, ids.d!, null).expect(200);
    expect(await order(c)).toEqual(['d', 'b', 'c', 'a']);
    await move(c, ids.b!, ids.a).expect(200);
    expect(await order(c)).toEqual(['d', 'c', 'a', 'b']);
  });

  it('is idempotent: repeating a move changes nothing, not even updatedAt', async () => {
    const { c, ids } = await setup(['a', 'b', 'c']);
    const first = await move(c, ids.c!, ids.a).expect(200);
    const again = await move(c, ids.c!, ids.a).expect(200);
    expect(again.body.item).toEqual(first.body.item);
    const top = await move(c, ids.a!, null).expect(200);
    expect(top.body.item.updatedAt).toBe(
      (await t.http().get(`/api/v1/tasks/${ids.a}`).set('Authorization', c.auth)).body.item.updatedAt,
    );
    expect(await order(c)).toEqual(['a', 'c', 'b']);
  });

  it('writes only the moved task', async () => {
    const { c, ids } = await setup(['a', 'b', 'c', 'd']);
    const before = await t.db
      .selectFrom('tasks')
      .select(['id', 'position', 'updated_at'])
      .where('workspace_id', '=', c.workspaceId)
      .execute();
    await move(c, ids.d!, ids.a).expect(200);
    const after = await t.db
      .selectFrom('tasks')
      .select(['id', 'position', 'updated_at'])
      .where('workspace_id', '=', c.workspaceId)
      .execute();
    const changed = after.filter((row) => {
      const old = before.find((b) => b.id === row.id)!;
      return old.position !== row.position || old.updated_at !== row.updated_at;
    });
    expect(changed.map((r) => r.id)).toEqual([ids.d]);
  });

  it('keeps finding room between two neighbours after many moves into the same gap', async () => {
    const { c, ids } = await setup(['a', 'b', 'x0', 'x1']);
    for (let i = 0; i < 60; i += 1) await move(c, ids[`x${i % 2}`]!, ids.a).expect(200);
    expect(await order(c)).toEqual(['a', 'x1', 'x0', 'b']);
  });

  it('gives distinct places to concurrent moves into the same gap', async () => {
    const { c, ids } = await setup(['a', 'b', 'm1', 'm2', 'm3', 'm4', 'm5']);
    const movers = ['m1', 'm2', 'm3', 'm4', 'm5'];
    const results = await Promise.all(movers.map((m) => move(c, ids[m]!, ids.a)));
    for (const r of results) expect(r.status).toBe(200);
    const rows = await t.db.selectFrom('tasks').select('position').where('workspace_id', '=', c.workspaceId).execute();
    expect(new Set(rows.map((r) => r.position)).size).toBe(rows.length);
    const final = await order(c);
    expect(final[0]).toBe('a');
    expect(final.slice(1, 6).sort()).toEqual(movers);
    expect(final[6]).toBe('b');
  });

  it('answers 409 not_top_level for a subtask', async () => {
    const { c, ids } = await setup(['a']);
    const sub = await createTask(t, c, { title: 'sub', parentId: ids.a });
    const res = await move(c, sub.id, null).expect(409);
    expect(res.body.error.code).toBe('not_top_level');
  });

  it("answers 404 for a task or afterId that is missing, deleted, a subtask or another workspace's", async () => {
    const { c, ids } = await setup(['a', 'b', 'gone']);
    const { c: other, ids: theirs } = await setup(['theirs']);
    const sub = await createTask(t, c, { title: 'sub', parentId: ids.a });
    await t.http().delete(`/api/v1/tasks/${ids.gone}`).set('Authorization', c.auth).expect(200);
    for (const afterId of [theirs.theirs, ids.gone, sub.id, '00000000-0000-4000-8000-000000000000']) {
      expect((await move(c, ids.a!, afterId).expect(404)).body.error.code).toBe('not_found');
    }
    await move(c, theirs.theirs!, null).expect(404);
    await move(c, ids.gone!, null).expect(404);
    await move(c, 'not-a-uuid', null).expect(404);
    expect(await order(other)).toEqual(['theirs']);
  });

  it('answers 422 after_self when afterId is the task itself', async () => {
    const { c, ids } = await setup(['a']);
    expect((await move(c, ids.a!, ids.a).expect(422)).body.error.code).toBe('after_self');
  });

  it('answers 400 for a missing afterId, a non-UUID afterId or other properties', async () => {
    const { c, ids } = await setup(['a', 'b']);
    for (const body of [{}, { afterId: 'abc' }, { afterId: 5 }, { afterId: null, before: true }]) {
      const res = await t
        .http()
        .put(`/api/v1/tasks/${ids.a}/position`)
        .set('Authorization', c.auth)
        .send(body)
        .expect(400);
      expect(res.body.error.code).toBe('validation_failed');
    }
  });

  it('needs tasks:write (403)', async () => {
    const { ids } = await setup(['a']);
    await move(await t.caller(['tasks:read']), ids.a!, null).expect(403);
  });
});
