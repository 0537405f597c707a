import { randomUUID } from 'node:crypto';
import { principalsOf, startReceiver, type Receiver } from '@app/devstack';
import { HIGH_LIMITS } from './helpers/factories.js';
import { startTestApp, type TestApp } from './helpers/harness.js';

const EVENTS = [
  'clipboard.item.created',
  'clipboard.item.updated',
  'clipboard.item.deleted',
  'snippet.created',
  'snippet.updated',
  'snippet.deleted',
  'settings.updated',
];

let t: TestApp;
let receiver: Receiver;

beforeAll(async () => {
  t = await startTestApp(
    { ...HIGH_LIMITS, WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_RETRY_BASE_MS: '200' },
    { webhooks: true },
  );
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver.close();
  await t.close();
});

describe('clipboard webhooks', () => {
  it('delivers each event type once, signed, with the resource as the API returns it', async () => {
    const c = await t.caller();
    const sub = (
      await t
        .http()
        .post('/api/clipboard/webhooks')
        .set('Authorization', c.auth)
        .send({ url: receiver.url, events: EVENTS })
        .expect(201)
    ).body;
    const item = (
      await t
        .http()
        .post('/api/clipboard')
        .set('Authorization', c.auth)
        .send({ type: 'text', content: 'hello', source: 'api' })
        .expect(201)
    ).body;
    const favorite = (
      await t
        .http()
        .patch(`/api/clipboard/${item.id}/favorite`)
        .set('Authorization', c.auth)
        .send({ favorite: true })
        .expect(200)
    ).body;
    await t.http().delete(`/api/clipboard/${item.id}`).set('Authorization', c.auth).expect(200);
    const snippet = (
      await t
        .http()
        .post('/api/snippets')
        .set('Authorization', c.auth)
        .send({ name: 'sig', content: 'Best, me' })
        .expect(201)
    ).body;
    await t.http().delete(`/api/snippets/${snippet.id}`).set('Authorization', c.auth).expect(200);
    const settings = (
      await t.http().put('/api/settings').set('Authorization', c.auth).send({ historyLimit: 500 }).expect(200)
    ).body;

    await receiver.waitFor((all) => all.length >= 6);
    await new Promise((r) => setTimeout(r, 300));
    expect(receiver.received.map((r) => [r.event.type, r.event.data])).toEqual([
      ['clipboard.item.created', item],
      ['clipboard.item.updated', favorite],
      ['clipboard.item.deleted', { id: item.id }],
      ['snippet.created', snippet],
      ['snippet.deleted', { id: snippet.id }],
      ['settings.updated', settings],
    ]);
    for (const r of receiver.received) expect(receiver.verifies(r, sub.secret)).toBe(true);
  });

  it("records a create's event exactly while an enabled subscription names it: a new item is created, a repeated one updated", async () => {
    const c = await t.caller();
    const create = (content: string) =>
      t.http().post('/api/clipboard').set('Authorization', c.auth).send({ type: 'text', content, source: 'api' });
    const seen = receiver.received.length;
    // Nobody subscribes: the creates are stored, no event.
    expect((await create('alpha')).status).toBe(201);
    // Subscribed to updates only: a new item is not an update; the same content again moves it to the top.
    const sub = (
      await t
        .http()
        .post('/api/clipboard/webhooks')
        .set('Authorization', c.auth)
        .send({ url: receiver.url, events: ['clipboard.item.updated'] })
        .expect(201)
    ).body;
    expect((await create('beta')).status).toBe(201);
    const moved = await create('alpha');
    expect(moved.status).toBe(200);
    await receiver.waitFor((all) => all.length >= seen + 1);
    // Disabled: nothing more.
    await t
      .http()
      .patch(`/api/clipboard/webhooks/${sub.id}`)
      .set('Authorization', c.auth)
      .send({ enabled: false })
      .expect(200);
    expect((await create('gamma')).status).toBe(201);
    expect((await create('beta')).status).toBe(200);
    await new Promise((r) => setTimeout(r, 500));
    expect(receiver.received.slice(seen).map((r) => [r.event.type, r.event.data])).toEqual([
      ['clipboard.item.updated', moved.body],
    ]);
    const list = (await t.http().get('/api/clipboard').set('Authorization', c.auth).expect(200)).body;
    expect(list.items.map((i: { content: string }) => i.content)).toEqual(['beta', 'gamma', 'alpha']);
  });

  it('reports what a sync batch applied, in order, once even when the batch is sent again', async () => {
    const c = await t.caller();
    const local = await startReceiver();
    try {
      await t
        .http()
        .post('/api/clipboard/webhooks')
        .set('Authorization', c.auth)
        .send({ url: local.url, events: EVENTS })
        .expect(201);
      const id = randomUUID();
      const changes = [
        {
          clientChangeId: randomUUID(),
          entity: 'item',
          op: 'upsert',
          id,
          data: { type: 'text', content: 'from device', source: 'desktop' },
        },
        { clientChangeId: randomUUID(), entity: 'item', op: 'favorite', id, data: { favorite: true } },
        { clientChangeId: randomUUID(), entity: 'item', op: 'delete', id },
      ];
      await t.http().post('/api/clipboard/sync').set('Authorization', c.auth).send({ changes }).expect(200);
      await t.http().post('/api/clipboard/sync').set('Authorization', c.auth).send({ changes }).expect(200);
      await local.waitFor((all) => all.length >= 3);
      await new Promise((r) => setTimeout(r, 300));
      expect(local.received.map((r) => [r.event.type, r.event.data.id, r.event.data.favorite])).toEqual([
        ['clipboard.item.created', id, false],
        ['clipboard.item.updated', id, true],
        ['clipboard.item.deleted', id, undefined],
      ]);
    } finally {
      await local.close();
    }
  });

  it("answers 403 in the clipboard envelope to a key without the webhooks scope, and 404 for another account's subscription", async () => {
    const c = await t.caller(['clipboard:read', 'clipboard:write']);
    const res = await t.http().get('/api/clipboard/webhooks').set('Authorization', c.auth);
    expect(res.status).toBe(403);
    expect(typeof res.body.error).toBe('string');
    const a = await t.caller();
    const b = await t.caller();
    const sub = (
      await t
        .http()
        .post('/api/clipboard/webhooks')
        .set('Authorization', a.auth)
        .send({ url: receiver.url, events: ['settings.updated'] })
        .expect(201)
    ).body;
    const other = await t.http().get(`/api/clipboard/webhooks/${sub.id}`).set('Authorization', b.auth);
    expect(other.status).toBe(404);
    expect(typeof other.body.error).toBe('string');
  });

  it("names the key or session that made each change, and an update's previous holds only the fields it changed", async () => {
    const c = await t.caller();
    const p = await principalsOf(t, '/api/settings/keys', c.accountId);
    const local = await startReceiver();
    try {
      await t
        .http()
        .post('/api/clipboard/webhooks')
        .set('Authorization', c.auth)
        .send({ url: local.url, events: ['clipboard.item.updated', 'settings.updated'] })
        .expect(201);
      const before = (await t.http().get('/api/settings').set('Authorization', c.auth).expect(200)).body;
      const item = (
        await t
          .http()
          .post('/api/clipboard')
          .set('Authorization', c.auth)
          .send({ type: 'text', content: 'x', source: 'api' })
          .expect(201)
      ).body;
      await t
        .http()
        .patch(`/api/clipboard/${item.id}/favorite`)
        .set('Authorization', p.key.auth)
        .send({ favorite: true })
        .expect(200);
      await t.http().put('/api/settings').set('Cookie', p.cookie).send({ historyLimit: 321 }).expect(200);
      await local.waitFor((all) => all.length >= 2);
      expect(local.received.map((r) => [r.event.type, r.event.actor, r.event.previous])).toEqual([
        ['clipboard.item.updated', { type: 'key', id: p.key.id }, { favorite: false }],
        ['settings.updated', { type: 'session', id: p.sessionId }, { historyLimit: before.historyLimit }],
      ]);
    } finally {
      await local.close();
    }
  });

  it('sends snippet.updated with the fields before for each snippet a replace changes, none for one it keeps as it was', async () => {
    const c = await t.caller();
    const local = await startReceiver();
    try {
      await t
        .http()
        .post('/api/clipboard/webhooks')
        .set('Authorization', c.auth)
        .send({ url: local.url, events: ['snippet.created', 'snippet.updated', 'snippet.deleted'] })
        .expect(201);
      const put = async (items: object[]) =>
        (await t.http().put('/api/snippets').set('Authorization', c.auth).send({ items }).expect(200)).body.items;
      const [a, b] = await put([
        { name: 'a', content: 'one' },
        { name: 'b', content: 'two', keyword: 'bb' },
      ]);
      const saved = await put([
        { id: a.id, name: 'a', content: 'one' },
        { id: b.id, name: 'b', content: 'TWO' },
        { name: 'c', content: 'three' },
      ]);
      const byName = (name: string) => saved.find((s: { name: string }) => s.name === name);
      await local.waitFor((all) => all.length >= 4);
      await new Promise((r) => setTimeout(r, 300));
      expect(local.received.map((r) => [r.event.type, r.event.data, r.event.previous])).toEqual([
        ['snippet.created', a, undefined],
        ['snippet.created', b, undefined],
        ['snippet.updated', byName('b'), { content: 'two', keyword: 'bb' }],
        ['snippet.created', byName('c'), undefined],
      ]);
    } finally {
      await local.close();
    }
  });
});

describe('clipboard webhook subscriptions and filters', () => {
  it('take no filter (only task subscriptions do): the field is 400 on create and PATCH, and none is shown', async () => {
    const c = await t.caller();
    const hooks = () => t.http().post('/api/clipboard/webhooks').set('Authorization', c.auth);
    await hooks()
      .send({ url: receiver.url, events: ['snippet.created'], filter: 'today' })
      .expect(400);
    await hooks()
      .send({ url: receiver.url, events: ['snippet.created'], filter: null })
      .expect(400);
    const sub = (
      await hooks()
        .send({ url: receiver.url, events: ['snippet.created'] })
        .expect(201)
    ).body;
    expect(sub).not.toHaveProperty('filter');
    await t
      .http()
      .patch(`/api/clipboard/webhooks/${sub.id}`)
      .set('Authorization', c.auth)
      .send({ filter: 'today' })
      .expect(400);
  });
});
