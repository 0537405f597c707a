import { principalsOf, startReceiver, type Receiver } from '@app/devstack';
import { addItem, createSeries, sessionOf } from './helpers/factories.js';
import { startTestApp, type TestApp } from './helpers/harness.js';

const EVENTS = ['note.updated', 'meeting.updated', 'item.created', 'item.updated', 'item.deleted'];

let t: TestApp;
let receiver: Receiver;

beforeAll(async () => {
  t = await startTestApp(
    { WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_RETRY_BASE_MS: '200', RATE_LIMIT_WRITES_PER_MINUTE: '100000' },
    { webhooks: true },
  );
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver.close();
  await t.close();
});

describe('meetings webhooks', () => {
  it('delivers each event type once, signed, with what an API key sees (never privateNotes)', async () => {
    const c = await t.caller();
    const sub = (
      await t
        .http()
        .post('/api/webhooks')
        .set('Authorization', c.auth)
        .send({ url: receiver.url, events: EVENTS })
        .expect(201)
    ).body;
    const { meetings } = await createSeries(t, c);
    const meeting = meetings[0];
    const cookie = await sessionOf(t, c);
    await t
      .http()
      .patch(`/api/meetings/${meeting.id}`)
      .set('Cookie', cookie)
      .send({ baseRevision: meeting.revision, sharedNotes: 'shared', privateNotes: 'SECRET salary' })
      .expect(200);
    const asKey = (await t.http().get(`/api/meetings/${meeting.id}`).set('Authorization', c.auth).expect(200)).body;
    const item = await addItem(t, c, meeting.id);
    const updated = (
      await t.http().patch(`/api/items/${item.id}`).set('Authorization', c.auth).send({ starred: true }).expect(200)
    ).body;
    await t.http().delete(`/api/items/${item.id}`).set('Authorization', c.auth).expect(204);
    const note = (
      await t.http().put('/api/notes/2030-01-07').set('Authorization', c.auth).send({ today: 'write tests' })
    ).body;

    await receiver.waitFor((all) => all.length >= 5);
    await new Promise((r) => setTimeout(r, 300));
    expect(receiver.received.map((r) => r.event.type)).toEqual([
      'meeting.updated',
      'item.created',
      'item.updated',
      'item.deleted',
      'note.updated',
    ]);
    for (const r of receiver.received) expect(receiver.verifies(r, sub.secret)).toBe(true);
    expect(receiver.received.map((r) => r.body).join('')).not.toContain('SECRET');
    const [m, created, changed, deleted, noted] = receiver.received.map((r) => r.event.data);
    expect(m).not.toHaveProperty('privateNotes');
    for (const [k, v] of Object.entries(m)) expect([k, asKey[k]]).toEqual([k, v]);
    expect(created).toEqual(item);
    expect(changed).toEqual(updated);
    expect(deleted.id).toBe(item.id);
    expect(noted).toEqual(note);
  });

  it("names the key or session that made each change, and an update's previous holds only the fields it changed", async () => {
    const c = await t.caller();
    const p = await principalsOf(t, '/api/me/keys', c.accountId);
    const local = await startReceiver();
    try {
      await t
        .http()
        .post('/api/webhooks')
        .set('Authorization', c.auth)
        .send({ url: local.url, events: ['meeting.updated', 'item.updated'] })
        .expect(201);
      const { meetings } = await createSeries(t, c);
      const item = await addItem(t, c, meetings[0].id);
      await t
        .http()
        .patch(`/api/items/${item.id}`)
        .set('Authorization', p.key.auth)
        .send({ starred: true })
        .expect(200);
      await t
        .http()
        .patch(`/api/meetings/${meetings[0].id}`)
        .set('Cookie', p.cookie)
        .send({ baseRevision: meetings[0].revision, sharedNotes: 'agenda', privateNotes: 'SECRET' })
        .expect(200);
      await local.waitFor((all) => all.length >= 2);
      expect(local.received.map((r) => [r.event.type, r.event.actor, r.event.previous])).toEqual([
        ['item.updated', { type: 'key', id: p.key.id }, { starred: item.starred }],
        ['meeting.updated', { type: 'session', id: p.sessionId }, { sharedNotes: meetings[0].sharedNotes }],
      ]);
    } finally {
      await local.close();
    }
  });

  it('sends series.* and person.* with their actor, an update with previous (changed fields only), and archiving (DELETE) as *.deleted, once', async () => {
    const c = await t.caller();
    const p = await principalsOf(t, '/api/me/keys', c.accountId);
    const local = await startReceiver();
    const types = [
      'series.created',
      'series.updated',
      'series.deleted',
      'person.created',
      'person.updated',
      'person.deleted',
    ];
    try {
      await t
        .http()
        .post('/api/webhooks')
        .set('Authorization', c.auth)
        .send({ url: local.url, events: types })
        .expect(201);
      const api = (method: 'patch' | 'delete', path: string, body?: object, auth = p.key.auth) =>
        t.http()[method](path).set('Authorization', auth).send(body);
      // The factory's person and series, made with the key.
      const { series, person: ada } = await createSeries(t, { ...c, auth: p.key.auth });
      const renamed = (await api('patch', `/api/people/${ada.id}`, { name: 'Ada L.' }).expect(200)).body;
      const moved = (
        await t
          .http()
          .patch(`/api/series/${series.id}`)
          .set('Cookie', p.cookie)
          .send({ title: 'Weekly', startTime: '10:00' })
          .expect(200)
      ).body;
      const archived = (await api('delete', `/api/series/${series.id}`).expect(200)).body;
      await api('delete', `/api/series/${series.id}`).expect(200);
      const gone = (await api('delete', `/api/people/${ada.id}`).expect(200)).body;
      await api('delete', `/api/people/${ada.id}`).expect(200);
      const restored = (await api('patch', `/api/people/${ada.id}`, { archived: false }).expect(200)).body;

      await local.waitFor((all) => all.length >= 7);
      await new Promise((r) => setTimeout(r, 500));
      const key = { type: 'key', id: p.key.id };
      expect(local.received.map((r) => [r.event.type, r.event.actor, r.event.data, r.event.previous])).toEqual([
        ['person.created', key, ada, undefined],
        ['series.created', key, series, undefined],
        ['person.updated', key, renamed, { name: 'Ada Lovelace' }],
        ['series.updated', { type: 'session', id: p.sessionId }, moved, { title: series.title, startTime: '09:00' }],
        ['series.deleted', key, archived, undefined],
        ['person.deleted', key, gone, undefined],
        ['person.updated', key, restored, { archived: true, archivedAt: gone.archivedAt }],
      ]);
      expect(archived.archived).toBe(true);
    } finally {
      await local.close();
    }
  });

  it('answers 403 to a key without the webhooks scope', async () => {
    const c = await t.caller(['meetings:read', 'meetings:write']);
    const res = await t.http().get('/api/webhooks').set('Authorization', c.auth);
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('insufficient_scope');
  });
});
