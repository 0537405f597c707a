import { startReceiver, type Receiver } from '@app/devstack';
import { create__Resource__, startTestApp, type Caller, type TestApp } from './helpers/harness.js';

let t: TestApp;
let c: Caller;
beforeAll(async () => {
  t = await startTestApp({ WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_RETRY_BASE_MS: '200' }, { webhooks: true });
  c = await t.caller();
});
afterAll(() => t.close());

describe('/api/__name__', () => {
  it('creates, reads, updates and deletes a __resource__', async () => {
    const created = await create__Resource__(t, c, 'First');
    expect(created).toEqual({
      id: expect.any(String),
      title: 'First',
      url: 'https://example.com/',
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect((await t.http().get(`/api/__name__/${created.id}`).set('Authorization', c.auth).expect(200)).body).toEqual(
      created,
    );
    const updated = (
      await t
        .http()
        .patch(`/api/__name__/${created.id}`)
        .set('Authorization', c.auth)
        .send({ title: 'Renamed', url: null })
        .expect(200)
    ).body;
    expect(updated).toMatchObject({ id: created.id, title: 'Renamed', url: null });
    await t.http().delete(`/api/__name__/${created.id}`).set('Authorization', c.auth).expect(204);
    await t.http().get(`/api/__name__/${created.id}`).set('Authorization', c.auth).expect(404);
    await t.http().delete(`/api/__name__/${created.id}`).set('Authorization', c.auth).expect(404);
  });

  it('pages the list with a keyset cursor, oldest first', async () => {
    const me = await t.caller();
    const ids: string[] = [];
    for (let n = 0; n < 5; n++) ids.push((await create__Resource__(t, me, `Item ${n}`)).id as string);
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let pages = 0; pages < 5; pages++) {
      const page: { items: Array<{ id: string }>; nextCursor: string | null } = (
        await t
          .http()
          .get('/api/__name__')
          .query({ limit: 2, ...(cursor ? { cursor } : {}) })
          .set('Authorization', me.auth)
          .expect(200)
      ).body;
      seen.push(...page.items.map((i) => i.id));
      cursor = page.nextCursor;
      if (cursor === null) break;
    }
    expect(seen).toEqual(ids);
    const bad = await t
      .http()
      .get('/api/__name__')
      .query({ cursor: 'not-a-cursor' })
      .set('Authorization', me.auth)
      .expect(400);
    expect(bad.body.error.code).toBe('invalid_cursor');
  });

  it("answers 404 for another account's __resource__ and 400 for an invalid body", async () => {
    const mine = await create__Resource__(t, c);
    const other = await t.caller();
    await t.http().get(`/api/__name__/${mine.id}`).set('Authorization', other.auth).expect(404);
    await t.http().patch(`/api/__name__/${mine.id}`).set('Authorization', other.auth).send({ title: 'x' }).expect(404);
    const invalid = await t
      .http()
      .post('/api/__name__')
      .set('Authorization', c.auth)
      .send({ title: '', url: 'not a url' })
      .expect(400);
    expect(invalid.body.error.code).toBe('validation_failed');
  });

  it('needs __name__:write to write', async () => {
    const reader = await t.caller(['__name__:read']);
    const res = await t.http().post('/api/__name__').set('Authorization', reader.auth).send({ title: 'x' }).expect(403);
    expect(res.body.error.code).toBe('insufficient_scope');
  });
});

describe('GET /api/__name__/changes', () => {
  it('starts with a full sync, then gives each later change once, a delete as a tombstone', async () => {
    const me = await t.caller();
    const kept = await create__Resource__(t, me, 'Kept');
    const gone = await create__Resource__(t, me, 'Gone');
    const first = (await t.http().get('/api/__name__/changes').set('Authorization', me.auth).expect(200)).body;
    expect(first.changes.map((ch: { type: string; id: string }) => [ch.type, ch.id])).toEqual([
      ['upsert', kept.id],
      ['upsert', gone.id],
    ]);
    expect(first.hasMore).toBe(false);
    await t
      .http()
      .patch(`/api/__name__/${kept.id}`)
      .set('Authorization', me.auth)
      .send({ title: 'Kept, renamed' })
      .expect(200);
    await t.http().delete(`/api/__name__/${gone.id}`).set('Authorization', me.auth).expect(204);
    const next = (
      await t
        .http()
        .get('/api/__name__/changes')
        .query({ cursor: first.nextCursor })
        .set('Authorization', me.auth)
        .expect(200)
    ).body;
    expect(next.changes).toEqual([
      { type: 'upsert', id: kept.id, item: expect.objectContaining({ title: 'Kept, renamed' }) },
      { type: 'delete', id: gone.id, item: null },
    ]);
    const foreign = await t
      .http()
      .get('/api/__name__/changes')
      .query({ cursor: first.nextCursor })
      .set('Authorization', c.auth)
      .expect(400);
    expect(foreign.body.error.code).toBe('invalid_cursor');
  });
});

describe('__name__ webhooks', () => {
  let receiver: Receiver;
  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterAll(() => receiver.close());

  it('delivers __resource__.created, .updated and .deleted once each, signed, with the record as the API shows it', async () => {
    const me = await t.caller();
    const events = ['__resource__.created', '__resource__.updated', '__resource__.deleted'];
    const sub = (
      await t
        .http()
        .post('/api/__name__/webhooks')
        .set('Authorization', me.auth)
        .send({ url: receiver.url, events })
        .expect(201)
    ).body;
    const created = await create__Resource__(t, me);
    const updated = (
      await t
        .http()
        .patch(`/api/__name__/${created.id}`)
        .set('Authorization', me.auth)
        .send({ title: 'Changed' })
        .expect(200)
    ).body;
    await t.http().delete(`/api/__name__/${created.id}`).set('Authorization', me.auth).expect(204);
    await receiver.waitFor((all) => all.length >= 3);
    expect(receiver.received.map((r) => r.event.type)).toEqual(events);
    for (const r of receiver.received) expect(receiver.verifies(r, sub.secret)).toBe(true);
    expect(receiver.received.map((r) => r.event.data)).toEqual([
      created,
      updated,
      expect.objectContaining({ id: created.id }),
    ]);
  });
});
