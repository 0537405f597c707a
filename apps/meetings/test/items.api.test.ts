import pg from 'pg';
import { addItem, createSeries, MISSING_ID, startApp } from './helpers/factories.js';
import type { Caller, TestApp } from './helpers/harness.js';

let t: TestApp;
let c: Caller;
let meetingId: string;
beforeAll(async () => {
  t = await startApp();
  c = await t.caller();
  meetingId = (await createSeries(t, c)).meetings[0].id;
});
afterAll(() => t.close());

describe('POST /api/meetings/:id/items', () => {
  it('adds an OPEN item (201) at the end, with every field', async () => {
    const res = await t
      .http()
      .post(`/api/meetings/${meetingId}/items`)
      .set('Authorization', c.auth)
      .send({
        kind: 'ACTION',
        text: 'Send the offer',
        notes: 'by Friday',
        starred: true,
        owner: 'Ada',
        dueDate: '2030-01-10',
      })
      .expect(201);
    expect(res.body).toEqual({
      id: expect.any(String),
      meetingId,
      parentId: null,
      kind: 'ACTION',
      text: 'Send the offer',
      notes: 'by Friday',
      starred: true,
      owner: 'Ada',
      dueDate: '2030-01-10',
      completedAt: null,
      status: 'OPEN',
      carryCount: 0,
      provenance: null,
      position: expect.any(Number),
      linkedTask: null,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const next = await addItem(t, c, meetingId, { kind: 'DECISION', text: 'Hire' });
    expect(next.position).toBe(res.body.position + 1);
    expect(next).toMatchObject({ notes: '', starred: false, owner: null, dueDate: null });
  });

  it('validates kind, text (1..2,000), notes (<= 20,000), dates and unknown fields with 400', async () => {
    const ok = await addItem(t, c, meetingId, { text: 't'.repeat(2000), notes: 'n'.repeat(20000) });
    expect(ok.text).toHaveLength(2000);
    for (const body of [
      { kind: 'IDEA', text: 'x' },
      { text: 'x' },
      { kind: 'ACTION' },
      { kind: 'ACTION', text: '' },
      { kind: 'ACTION', text: 't'.repeat(2001) },
      { kind: 'ACTION', text: 'x', notes: 'n'.repeat(20001) },
      { kind: 'ACTION', text: 'x', dueDate: '2030-02-30' },
      { kind: 'ACTION', text: 'x', completedAt: 'yesterday' },
      { kind: 'ACTION', text: 'x', status: 'CARRIED' },
      { kind: 'ACTION', text: 'x\u0000' },
      { kind: 'ACTION', text: 'x', starred: 'yes' },
    ]) {
      await t.http().post(`/api/meetings/${meetingId}/items`).set('Authorization', c.auth).send(body).expect(400);
    }
  });

  it('nests one level under a top-level parent of the same meeting', async () => {
    const parent = await addItem(t, c, meetingId, { text: 'parent' });
    const child = await addItem(t, c, meetingId, { text: 'child', parentId: parent.id });
    expect(child).toMatchObject({ parentId: parent.id, position: 0 });
    const deep = await t
      .http()
      .post(`/api/meetings/${meetingId}/items`)
      .set('Authorization', c.auth)
      .send({ kind: 'ACTION', text: 'x', parentId: child.id })
      .expect(409);
    expect(deep.body.error.code).toBe('nesting_too_deep');
    const missing = await t
      .http()
      .post(`/api/meetings/${meetingId}/items`)
      .set('Authorization', c.auth)
      .send({ kind: 'ACTION', text: 'x', parentId: MISSING_ID })
      .expect(404);
    expect(missing.body.error.code).toBe('parent_not_found');
  });

  it('is 404 for a meeting of another account, an unknown or malformed id', async () => {
    const other = await t.caller();
    await t
      .http()
      .post(`/api/meetings/${meetingId}/items`)
      .set('Authorization', other.auth)
      .send({ kind: 'ACTION', text: 'x' })
      .expect(404);
    await t
      .http()
      .post(`/api/meetings/${MISSING_ID}/items`)
      .set('Authorization', c.auth)
      .send({ kind: 'ACTION', text: 'x' })
      .expect(404);
    await t
      .http()
      .post('/api/meetings/xyz/items')
      .set('Authorization', c.auth)
      .send({ kind: 'ACTION', text: 'x' })
      .expect(404);
  });
});

describe('PATCH /api/items/:id', () => {
  it('turns a talking point into an ACTION and updates the listed fields', async () => {
    const item = await addItem(t, c, meetingId);
    const res = await t
      .http()
      .patch(`/api/items/${item.id}`)
      .set('Authorization', c.auth)
      .send({ kind: 'ACTION', owner: 'Grace', dueDate: '2030-02-01', text: 'Write it down', notes: 'n', starred: true })
      .expect(200);
    expect(res.body).toMatchObject({
      id: item.id,
      kind: 'ACTION',
      owner: 'Grace',
      dueDate: '2030-02-01',
      text: 'Write it down',
      notes: 'n',
      starred: true,
      status: 'OPEN',
    });
  });

  it('completes an action with a timestamp and reopens it with null', async () => {
    const item = await addItem(t, c, meetingId, { kind: 'ACTION', text: 'do it' });
    const done = await t
      .http()
      .patch(`/api/items/${item.id}`)
      .set('Authorization', c.auth)
      .send({ completedAt: '2030-01-07T10:15:00.000Z' })
      .expect(200);
    expect(done.body.completedAt).toBe('2030-01-07T10:15:00Z');
    const open = await t
      .http()
      .patch(`/api/items/${item.id}`)
      .set('Authorization', c.auth)
      .send({ completedAt: null, owner: null, dueDate: null })
      .expect(200);
    expect(open.body).toMatchObject({ completedAt: null, owner: null, dueDate: null });
  });

  it('rejects fields outside the list, an empty body and bad values with 400; other accounts get 404', async () => {
    const item = await addItem(t, c, meetingId);
    for (const body of [
      {},
      { status: 'CARRIED' },
      { carryCount: 3 },
      { kind: 'NOTE' },
      { completedAt: 5 },
      { text: '' },
    ]) {
      await t.http().patch(`/api/items/${item.id}`).set('Authorization', c.auth).send(body).expect(400);
    }
    const other = await t.caller();
    await t.http().patch(`/api/items/${item.id}`).set('Authorization', other.auth).send({ text: 'x' }).expect(404);
    await t.http().patch('/api/items/nope').set('Authorization', c.auth).send({ text: 'x' }).expect(404);
  });
});

describe('DELETE /api/items/:id', () => {
  it('deletes permanently (204) with nested items; a second delete is 404', async () => {
    const parent = await addItem(t, c, meetingId);
    const child = await addItem(t, c, meetingId, { parentId: parent.id });
    await t.http().delete(`/api/items/${parent.id}`).set('Authorization', c.auth).expect(204);
    const rows = await t.db.selectFrom('items').select('id').where('id', 'in', [parent.id, child.id]).execute();
    expect(rows).toEqual([]);
    await t.http().delete(`/api/items/${parent.id}`).set('Authorization', c.auth).expect(404);
  });

  it("is 404 for another account's item, which stays", async () => {
    const item = await addItem(t, c, meetingId);
    const other = await t.caller();
    await t.http().delete(`/api/items/${item.id}`).set('Authorization', other.auth).expect(404);
    expect(await t.db.selectFrom('items').select('id').where('id', '=', item.id).executeTakeFirst()).toBeDefined();
  });
});

describe('POST /api/items/reorder', () => {
  let mid: string;
  let ids: string[];
  beforeEach(async () => {
    mid = (await createSeries(t, c)).meetings[0].id;
    ids = [];
    for (const text of ['a', 'b', 'c']) ids.push((await addItem(t, c, mid, { text })).id);
  });

  it('sets the exact order of the top-level items (200)', async () => {
    const child = await addItem(t, c, mid, { text: 'nested', parentId: ids[0] });
    const order = [ids[2]!, ids[0]!, ids[1]!];
    const res = await t
      .http()
      .post('/api/items/reorder')
      .set('Authorization', c.auth)
      .send({ meetingId: mid, itemIds: order })
      .expect(200);
    expect(res.body.meetingId).toBe(mid);
    expect(res.body.items.map((i: any) => i.id)).toEqual(order);
    expect(res.body.items.map((i: any) => i.position)).toEqual([0, 1, 2]);
    const read = await t.http().get(`/api/meetings/${mid}`).set('Authorization', c.auth).expect(200);
    expect(read.body.items.map((i: any) => i.id)).toEqual([ids[2], ids[0], child.id, ids[1]]);
  });

  it('answers a missing, extra, repeated or nested id with 409 reorder_conflict and changes nothing', async () => {
    const child = await addItem(t, c, mid, { text: 'nested', parentId: ids[0] });
    const other = await addItem(t, c, (await createSeries(t, c)).meetings[0].id);
    for (const itemIds of [
      [ids[0], ids[1]],
      [...ids, other.id],
      [ids[0], ids[0], ids[1], ids[2]],
      [...ids, child.id],
      [],
    ]) {
      const res = await t
        .http()
        .post('/api/items/reorder')
        .set('Authorization', c.auth)
        .send({ meetingId: mid, itemIds })
        .expect(409);
      expect(res.body.error.code).toBe('reorder_conflict');
    }
    const read = await t.http().get(`/api/meetings/${mid}`).set('Authorization', c.auth).expect(200);
    expect(read.body.items.filter((i: any) => i.parentId === null).map((i: any) => i.id)).toEqual(ids);
  });

  it("is 400 for a bad body and 404 for another account's meeting", async () => {
    for (const body of [{}, { meetingId: mid }, { meetingId: mid, itemIds: ['x'] }, { meetingId: 'x', itemIds: [] }]) {
      await t.http().post('/api/items/reorder').set('Authorization', c.auth).send(body).expect(400);
    }
    const stranger = await t.caller();
    await t
      .http()
      .post('/api/items/reorder')
      .set('Authorization', stranger.auth)
      .send({ meetingId: mid, itemIds: ids })
      .expect(404);
  });

  it('serializes concurrent reorders on the meeting: every one applies whole', async () => {
    const orders = [
      [ids[0]!, ids[1]!, ids[2]!],
      [ids[2]!, ids[1]!, ids[0]!],
      [ids[1]!, ids[2]!, ids[0]!],
    ];
    const results = await Promise.all(
      orders.map((itemIds) =>
        t.http().post('/api/items/reorder').set('Authorization', c.auth).send({ meetingId: mid, itemIds }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual([200, 200, 200]);
    const rows = await t.db
      .selectFrom('items')
      .select(['id', 'position'])
      .where('meeting_id', '=', mid)
      .orderBy('position')
      .execute();
    expect(rows.map((r) => r.position)).toEqual([0, 1, 2]);
    expect(orders.map((o) => o.join())).toContain(rows.map((r) => r.id).join());
  });
});

describe('item edits while a migration changes the table (a rolling deploy)', () => {
  it('answers 200 before, after a column is added and after it is dropped (no cached plan breaks)', async () => {
    const items = await Promise.all(
      Array.from({ length: 12 }, (_, i) => addItem(t, c, meetingId, { kind: 'ACTION', text: `rollout ${i}` })),
    );
    // Enough concurrent edits that every pooled connection has run the edit's statement.
    const editAll = async (text: string) => {
      const res = await Promise.all(
        items.map((item) => t.http().patch(`/api/items/${item.id}`).set('Authorization', c.auth).send({ text })),
      );
      expect(res.map((r) => r.status)).toEqual(Array(12).fill(200));
      expect(res.every((r) => r.body.text === text && !('rollout_probe' in r.body))).toBe(true);
    };
    const admin = new pg.Client({ connectionString: t.databaseUrl });
    await admin.connect();
    try {
      await editAll('before');
      await admin.query('alter table meetings.items add column rollout_probe text');
      await editAll('added');
      await admin.query('alter table meetings.items drop column rollout_probe');
      await editAll('dropped');
    } finally {
      await admin.end();
    }
  });
});
