import { pollUntil, principalsOf, startReceiver, type Receiver } from '@app/devstack';
import { sql } from 'kysely';
import { createTask } from './helpers/factories.js';
import { startTestApp, type Caller, type TestApp } from './helpers/harness.js';

const EVENTS = ['task.created', 'task.updated', 'task.completed', 'task.reopened', 'task.deleted', 'task.moved'];

let t: TestApp;
let receiver: Receiver;

beforeAll(async () => {
  t = await startTestApp({ WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_RETRY_BASE_MS: '200' }, { webhooks: true });
});
afterAll(async () => {
  await t.close();
});
beforeEach(async () => {
  receiver = await startReceiver();
});
afterEach(async () => {
  await receiver.close();
});

async function subscribe(c: Caller, body: Record<string, unknown> = {}) {
  const res = await t
    .http()
    .post('/api/v1/webhooks')
    .set('Authorization', c.auth)
    .send({ url: receiver.url, events: EVENTS, ...body });
  expect(res.status).toBe(201);
  return res.body as { id: string; secret: string } & Record<string, unknown>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * When a created task's row was inserted (its createdAt, the insert's clock_timestamp()), at or
 * before its commit: a first try's lateness is measured from there, not from when the test sent
 * the request, which on a loaded machine waited its turn for hundreds of milliseconds first.
 */
const insertedAt = (task: Record<string, any>) => Date.parse(task.createdAt as string);

describe('task.created with an Idempotency-Key', () => {
  it('records one event for 10 concurrent creates with one key, and none for a replay', async () => {
    const c = await t.caller();
    const sub = await subscribe(c, { events: ['task.created'] });
    const post = () =>
      t
        .http()
        .post('/api/v1/tasks')
        .set('Authorization', c.auth)
        .set('Idempotency-Key', 'watched')
        .send({ title: 'watched once' });
    const results = await Promise.all(Array.from({ length: 10 }, post));
    const created = results.filter((r) => r.status === 201 && r.headers['idempotent-replayed'] === undefined);
    expect(created).toHaveLength(1);
    for (const r of results)
      expect(r.status === 201 ? r.body : r.body.error.code).toEqual(
        r.status === 201 ? created[0]!.body : 'idempotency_request_in_progress',
      );
    await post().expect(201).expect('Idempotent-Replayed', 'true');
    const events = await sql<{
      body: string;
    }>`select body from webhook_deliveries where subscription_id = ${sub.id}`.execute(t.db);
    expect(events.rows.map((e) => JSON.parse(e.body).data)).toEqual([created[0]!.body.item]);
  });
});

describe('webhook subscriptions', () => {
  it('creates a subscription whose secret is shown once, then lists, gets, updates and deletes it', async () => {
    const c = await t.caller();
    const sub = await subscribe(c, { description: 'my hook' });
    expect(sub.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(sub).toMatchObject({
      url: receiver.url,
      events: EVENTS,
      description: 'my hook',
      enabled: true,
      disabledReason: null,
    });
    const list = await t.http().get('/api/v1/webhooks').set('Authorization', c.auth);
    expect(list.status).toBe(200);
    expect(list.body.items).toHaveLength(1);
    expect(list.body.items[0].secret).toBeUndefined();
    const got = await t.http().get(`/api/v1/webhooks/${sub.id}`).set('Authorization', c.auth);
    expect(got.body.secret).toBeUndefined();
    const patched = await t
      .http()
      .patch(`/api/v1/webhooks/${sub.id}`)
      .set('Authorization', c.auth)
      .send({ events: ['task.created'], description: null });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ events: ['task.created'], description: null });
    expect((await t.http().delete(`/api/v1/webhooks/${sub.id}`).set('Authorization', c.auth)).status).toBe(204);
    expect((await t.http().get(`/api/v1/webhooks/${sub.id}`).set('Authorization', c.auth)).status).toBe(404);
  });

  it("answers 404 for another account's subscription and for an id that is not a UUID", async () => {
    const a = await t.caller();
    const b = await t.caller();
    const sub = await subscribe(a);
    expect((await t.http().get(`/api/v1/webhooks/${sub.id}`).set('Authorization', b.auth)).status).toBe(404);
    expect(
      (await t.http().patch(`/api/v1/webhooks/${sub.id}`).set('Authorization', b.auth).send({ enabled: false })).status,
    ).toBe(404);
    expect((await t.http().delete(`/api/v1/webhooks/${sub.id}`).set('Authorization', b.auth)).status).toBe(404);
    expect((await t.http().post(`/api/v1/webhooks/${sub.id}/rotate-secret`).set('Authorization', b.auth)).status).toBe(
      404,
    );
    expect((await t.http().get('/api/v1/webhooks/nope').set('Authorization', a.auth)).status).toBe(404);
  });

  it('answers 403 to a key without the webhooks scope, and to one that cannot read an event it names', async () => {
    const c = await t.caller(['tasks:read', 'tasks:write']);
    const res = await t
      .http()
      .post('/api/v1/webhooks')
      .set('Authorization', c.auth)
      .send({ url: receiver.url, events: EVENTS });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('insufficient_scope');
    const onlyHooks = await t.caller(['webhooks']);
    const res2 = await t
      .http()
      .post('/api/v1/webhooks')
      .set('Authorization', onlyHooks.auth)
      .send({ url: receiver.url, events: EVENTS });
    expect(res2.status).toBe(403);
  });

  it('answers 400 for bad bodies: unknown events, a non-http URL, unknown fields', async () => {
    const c = await t.caller();
    for (const body of [
      { url: receiver.url, events: ['task.exploded'] },
      { url: 'ftp://example.com/x', events: EVENTS },
      { url: receiver.url, events: EVENTS, secret: 'x' },
      { url: receiver.url, events: [] },
      { url: receiver.url, events: EVENTS, description: 'a\u0000b' },
      { url: `${receiver.url}\u0000`, events: EVENTS },
    ]) {
      const res = await t.http().post('/api/v1/webhooks').set('Authorization', c.auth).send(body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('validation_failed');
    }
  });

  it('refuses private, loopback and link-local targets without WEBHOOK_ALLOW_PRIVATE', async () => {
    const strict = await startTestApp();
    try {
      const c = await strict.caller();
      for (const url of [
        'http://127.0.0.1:9/x',
        'http://10.1.2.3/x',
        'http://169.254.169.254/latest',
        'http://[::1]/x',
        'http://localhost/x',
        'http://192.168.1.1/x',
      ]) {
        const res = await strict
          .http()
          .post('/api/v1/webhooks')
          .set('Authorization', c.auth)
          .send({ url, events: EVENTS });
        expect({ url, status: res.status, path: res.body.error?.details?.[0]?.path }).toEqual({
          url,
          status: 400,
          path: '/url',
        });
      }
    } finally {
      await strict.close();
    }
  });
});

describe('webhook deliveries', () => {
  it('delivers each event type once, signed (standardwebhooks verifies it), with the resource as the API returns it', async () => {
    const c = await t.caller();
    const sub = await subscribe(c);
    const first = await createTask(t, c, { title: 'first' });
    const task = await createTask(t, c, { title: 'hello', tags: ['a'] });
    const updated = (
      await t.http().patch(`/api/v1/tasks/${task.id}`).set('Authorization', c.auth).send({ title: 'hello 2' })
    ).body.item;
    const completed = (await t.http().post(`/api/v1/tasks/${task.id}/complete`).set('Authorization', c.auth)).body.item;
    const reopened = (await t.http().post(`/api/v1/tasks/${task.id}/reopen`).set('Authorization', c.auth)).body.item;
    const moved = (
      await t.http().put(`/api/v1/tasks/${task.id}/position`).set('Authorization', c.auth).send({ afterId: null })
    ).body.item;
    const deleted = (await t.http().delete(`/api/v1/tasks/${first.id}`).set('Authorization', c.auth)).body.item;
    const expected = [
      ['task.created', first],
      ['task.created', task],
      ['task.updated', updated],
      ['task.completed', completed],
      ['task.reopened', reopened],
      ['task.moved', moved],
      ['task.deleted', deleted],
    ];
    await receiver.waitFor((all) => all.length >= expected.length);
    await sleep(300);
    expect(receiver.received.map((r) => [r.event.type, r.event.data])).toEqual(expected);
    for (const r of receiver.received) {
      expect(receiver.verifies(r, sub.secret)).toBe(true);
      expect(r.id).toMatch(/^msg_/);
      expect(r.headers['content-type']).toBe('application/json');
    }
    expect(new Set(receiver.received.map((r) => r.id)).size).toBe(expected.length);
    const current = (await t.http().get(`/api/v1/tasks/${task.id}`).set('Authorization', c.auth)).body.item;
    expect(receiver.received[5]!.event.data).toEqual(
      Object.fromEntries(Object.entries(current).filter(([k]) => k !== 'subtasks' && k !== 'progress')),
    );
  });

  it("sends only subscribed types, only to the account's own subscriptions", async () => {
    const a = await t.caller();
    const b = await t.caller();
    await subscribe(a, { events: ['task.completed'] });
    const task = await createTask(t, a);
    await createTask(t, b);
    await t.http().post(`/api/v1/tasks/${task.id}/complete`).set('Authorization', a.auth).expect(200);
    await receiver.waitFor((all) => all.length >= 1);
    await sleep(500);
    expect(receiver.received.map((r) => r.event.type)).toEqual(['task.completed']);
  });

  it("records an edit's event exactly while an enabled subscription names task.updated, with If-Match and 404 answered alike", async () => {
    const c = await t.caller();
    const task = await createTask(t, c);
    const patch = (id: string, title: string, ifMatch?: string) => {
      const req = t.http().patch(`/api/v1/tasks/${id}`).set('Authorization', c.auth);
      return (ifMatch ? req.set('If-Match', ifMatch) : req).send({ title });
    };
    // No subscription: one statement, no event.
    const first = await patch(task.id, 'one', `"${task.updatedAt}"`);
    expect(first.status).toBe(200);
    expect((await patch(task.id, 'stale', `"${task.updatedAt}"`)).status).toBe(412);
    // Subscribed to other events only: still no event.
    await subscribe(c, { events: ['task.created'] });
    const second = await patch(task.id, 'two', first.headers.etag);
    expect(second.status).toBe(200);
    // Subscribed: every edit is recorded, and the same rules answer.
    const sub = await subscribe(c, { events: ['task.updated'] });
    const third = await patch(task.id, 'three', second.headers.etag);
    expect(third.status).toBe(200);
    expect((await patch(task.id, 'stale', second.headers.etag)).status).toBe(412);
    expect((await patch('00000000-0000-4000-8000-000000000000', 'missing')).status).toBe(404);
    await receiver.waitFor((all) => all.length >= 1);
    // Disabled again: no event.
    await t
      .http()
      .patch(`/api/v1/webhooks/${sub.id}`)
      .set('Authorization', c.auth)
      .send({ enabled: false })
      .expect(200);
    const fourth = await patch(task.id, 'four', third.headers.etag);
    expect(fourth.status).toBe(200);
    await sleep(500);
    expect(receiver.received.map((r) => [r.event.type, r.event.data.title])).toEqual([['task.updated', 'three']]);
    expect(fourth.body.item.title).toBe('four');
    expect((await t.http().get(`/api/v1/tasks/${task.id}`).set('Authorization', c.auth)).body.item.title).toBe('four');
  });

  it('starts the first try within a second of the commit', async () => {
    const c = await t.caller();
    await subscribe(c, { events: ['task.created'] });
    const task = await createTask(t, c);
    await receiver.waitFor((all) => all.length >= 1, 5000);
    expect(receiver.received[0]!.at - insertedAt(task)).toBeLessThan(1000);
  });

  it('starts the first try within a second of the commit while every delivery slot holds a subscription that has sent everything', async () => {
    // The worker delivers 8 subscriptions at once (WEBHOOK_CONCURRENCY's default); each of these
    // has sent its event and waits within its turn for more.
    const busy = await Promise.all(Array.from({ length: 8 }, () => t.caller()));
    for (const c of busy) await subscribe(c, { events: ['task.created'] });
    const late = await t.caller();
    await subscribe(late, { events: ['task.created'] });
    await Promise.all(busy.map((c) => createTask(t, c)));
    await receiver.waitFor((all) => all.length === 8, 5000);
    const task = await createTask(t, late);
    await receiver.waitFor((all) => all.some((r) => r.event.data.id === task.id), 5000);
    expect(receiver.received.find((r) => r.event.data.id === task.id)!.at - insertedAt(task)).toBeLessThan(1000);
  });

  it('starts every first try within a second of the commit under a steady stream of writes to several subscriptions', async () => {
    const callers = await Promise.all(Array.from({ length: 6 }, () => t.caller()));
    for (const c of callers) await subscribe(c, { events: ['task.created'] });
    // One delivery to each first: the stream measures a steady state, not each subscription's first
    // job and the worker's first statements (a first try alone is timed by the tests above).
    await Promise.all(callers.map((c) => createTask(t, c)));
    await receiver.waitFor((all) => all.length === callers.length, 10_000);
    const startedAt = new Map<string, number>();
    // 5 s of writes at a steady 20 a second, spread over the subscriptions: longer than a turn (2 s),
    // so turns end while writes go on. Each is sent at its time, not when the one before it was
    // answered: a closed loop of 4 writers kept this process (the app, the worker and the receiver
    // whose timing is measured) busy all the time. With 8 busy loops beside this test (3 runs each):
    // the closed loop with no warm-up failed 2 of 2 (1,022 and 1,149 ms), as CI run 58 did (1,043
    // ms); the closed loop warmed up gave 348-581 ms at most, this 211-231 ms. Sent raw: checking
    // each answer against the OpenAPI document (other tests do) would take CPU here too.
    const rate = 20;
    const firstAt = Date.now();
    await Promise.all(
      Array.from({ length: rate * 5 }, async (_, i) => {
        await sleep(firstAt + (i * 1000) / rate - Date.now());
        const res = await t
          .raw()
          .post('/api/v1/tasks')
          .set('Authorization', callers[i % callers.length]!.auth)
          .send({ title: 'A task' })
          .expect(201);
        startedAt.set(res.body.item.id, insertedAt(res.body.item));
      }),
    );
    await receiver.waitFor((all) => all.length === callers.length + startedAt.size, 10_000);
    const lateness = receiver.received
      .filter((r) => startedAt.has(r.event.data.id))
      .map((r) => r.at - startedAt.get(r.event.data.id)!)
      .sort((a, b) => a - b);
    console.log(
      `steady stream: ${startedAt.size} writes; first try after the insert: median ${lateness[lateness.length >> 1]} ms, max ${lateness.at(-1)} ms`,
    );
    expect({ writes: startedAt.size, late: lateness.filter((ms) => ms >= 1000) }).toEqual({ writes: 100, late: [] });
  });

  it('starts the first try within a second of the commit for a write that commits after a later one', async () => {
    const [early, later] = [await t.caller(), await t.caller()];
    await subscribe(early, { events: ['task.created'] });
    await subscribe(later, { events: ['task.created'] });
    let committed = 0;
    await t.db.transaction().execute(async (trx) => {
      // Takes its outbox number first; commits only after a later write's event was delivered.
      await sql`select webhook_emit(${early.accountId}::uuid, 'task.created', 'msg_committed_late', '{"type":"task.created","data":{}}', null)`.execute(
        trx,
      );
      await createTask(t, later);
      await receiver.waitFor((all) => all.length === 1, 5000);
      committed = Date.now();
    });
    await receiver.waitFor((all) => all.some((r) => r.id === 'msg_committed_late'), 10_000);
    expect(receiver.received.find((r) => r.id === 'msg_committed_late')!.at - committed).toBeLessThan(1000);
  });

  it('sends a delivery whose write commits while a later one of the same subscription is being sent next, not seconds later', async () => {
    const c = await t.caller();
    await subscribe(c, { events: ['task.created'] });
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    receiver.answer = async (r) => {
      if (r.id !== 'msg_committed_in_turn') await held;
      return 204;
    };
    await t.db.transaction().execute(async (trx) => {
      await sql`select webhook_emit(${c.accountId}::uuid, 'task.created', 'msg_committed_in_turn', '{"type":"task.created","data":{}}', null)`.execute(
        trx,
      );
      await createTask(t, c);
      // The later write's delivery is in flight (its answer held) when this one commits.
      await receiver.waitFor((all) => all.length === 1, 5000);
    });
    const committed = Date.now();
    await sleep(300);
    release();
    await receiver.waitFor((all) => all.some((r) => r.id === 'msg_committed_in_turn'), 10_000);
    expect(receiver.received.find((r) => r.id === 'msg_committed_in_turn')!.at - committed).toBeLessThan(1000);
  });

  it('retries a 500 and a timeout with the same webhook-id and growing gaps, and lists the attempts', async () => {
    const c = await t.caller();
    const sub = await subscribe(c, { events: ['task.created'] });
    let n = 0;
    receiver.answer = () => {
      n += 1;
      return n <= 3 ? 500 : n === 4 ? 'hang' : 200;
    };
    await createTask(t, c);
    await receiver.waitFor((all) => all.length >= 5, 30_000);
    const ids = new Set(receiver.received.map((r) => r.id));
    expect(ids.size).toBe(1);
    const gaps = receiver.received.slice(1).map((r, i) => r.at - receiver.received[i]!.at);
    // 200, 400, 800 ms after the 500s; then the 10 s timeout plus 1600 ms.
    expect(gaps[0]).toBeGreaterThanOrEqual(190);
    expect(gaps[1]).toBeGreaterThan(gaps[0]! * 1.5);
    expect(gaps[2]).toBeGreaterThan(gaps[1]! * 1.5);
    expect(gaps[3]).toBeGreaterThanOrEqual(10_000 + 1600 - 50);
    const deliveries = await t.http().get(`/api/v1/webhooks/${sub.id}/deliveries`).set('Authorization', c.auth);
    expect(deliveries.status).toBe(200);
    expect(deliveries.body.items.map((d: any) => [d.attempt, d.statusCode])).toEqual([
      [5, 200],
      [4, null],
      [3, 500],
      [2, 500],
      [1, 500],
    ]);
    expect(deliveries.body.items[1].error).toMatch(/10 s/);
    expect(deliveries.body.items[0].nextAttemptAt).toBeNull();
    expect(deliveries.body.items[2].nextAttemptAt).not.toBeNull();
  }, 40_000);

  it('keeps commit order for 100 quick writes, a failing head holding back the rest', async () => {
    const c = await t.caller();
    await subscribe(c, { events: ['task.created'] });
    let failures = 2;
    receiver.answer = () => (failures-- > 0 ? 503 : 204);
    const titles: string[] = [];
    for (let i = 0; i < 100; i++) {
      titles.push(`t${i}`);
      await createTask(t, c, { title: `t${i}` });
    }
    await receiver.waitFor((all) => new Set(all.map((r) => r.id)).size >= 100, 30_000);
    const firstSeen: string[] = [];
    const seen = new Set<string>();
    for (const r of receiver.received) {
      if (!seen.has(r.id)) firstSeen.push(r.event.data.title);
      seen.add(r.id);
    }
    expect(firstSeen).toEqual(titles);
  }, 60_000);

  it('signs with both secrets for a day after a rotation', async () => {
    const c = await t.caller();
    const sub = await subscribe(c, { events: ['task.created'] });
    const rotated = await t.http().post(`/api/v1/webhooks/${sub.id}/rotate-secret`).set('Authorization', c.auth);
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).not.toBe(sub.secret);
    expect(Date.parse(rotated.body.previousSecretExpiresAt) - Date.now()).toBeGreaterThan(23.9 * 3600_000);
    await createTask(t, c);
    await receiver.waitFor((all) => all.length >= 1);
    const r = receiver.received[0]!;
    expect(String(r.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(receiver.verifies(r, sub.secret)).toBe(true);
    expect(receiver.verifies(r, rotated.body.secret)).toBe(true);
    expect(receiver.verifies(r, 'whsec_' + Buffer.alloc(32, 1).toString('base64'))).toBe(false);
  });

  it('sends nothing to a disabled subscription, not even later, nor to a deleted one', async () => {
    const c = await t.caller();
    const sub = await subscribe(c, { events: ['task.created'] });
    const other = await startReceiver();
    try {
      const gone = (
        await t
          .http()
          .post('/api/v1/webhooks')
          .set('Authorization', c.auth)
          .send({ url: other.url, events: ['task.created'] })
      ).body;
      await t
        .http()
        .patch(`/api/v1/webhooks/${sub.id}`)
        .set('Authorization', c.auth)
        .send({ enabled: false })
        .expect(200);
      await t.http().delete(`/api/v1/webhooks/${gone.id}`).set('Authorization', c.auth).expect(204);
      await createTask(t, c, { title: 'while off' });
      await sleep(300);
      await t
        .http()
        .patch(`/api/v1/webhooks/${sub.id}`)
        .set('Authorization', c.auth)
        .send({ enabled: true })
        .expect(200);
      await createTask(t, c, { title: 'back on' });
      await receiver.waitFor((all) => all.length >= 1);
      await sleep(700);
      expect(receiver.received.map((r) => r.event.data.title)).toEqual(['back on']);
      expect(other.received).toHaveLength(0);
    } finally {
      await other.close();
    }
  });

  it('skips a delivery still being retried when its subscription is disabled: re-enabled, it sends what comes next, not the skipped one', async () => {
    const c = await t.caller();
    const sub = await subscribe(c, { events: ['task.created'] });
    const patch = (enabled: boolean) =>
      t.http().patch(`/api/v1/webhooks/${sub.id}`).set('Authorization', c.auth).send({ enabled }).expect(200);
    receiver.answer = () => 500;
    await createTask(t, c, { title: 'failing' });
    await receiver.waitFor((all) => all.length >= 1);
    await patch(false);
    // Its next try (200 ms after the first, then 400 ms) comes due while the subscription is off.
    await sleep(1500);
    const tried = receiver.received.length;
    receiver.answer = () => 204;
    await patch(true);
    await createTask(t, c, { title: 'back on' });
    await receiver.waitFor((all) => all.length > tried);
    await sleep(700);
    expect(receiver.received.slice(tried).map((r) => r.event.data.title)).toEqual(['back on']);
  });

  it('stops sending when the key that made the subscription is revoked or loses the read scope', async () => {
    const c = await t.caller();
    const session = await t.admin('create-session', '--account', c.accountId);
    const key = (
      await t
        .http()
        .post('/api/v1/keys')
        .set('Cookie', session.cookie)
        .send({ scopes: ['tasks:read', 'tasks:write', 'webhooks'] })
    ).body;
    await t
      .http()
      .post('/api/v1/webhooks')
      .set('Authorization', `Bearer ${key.key}`)
      .send({ url: receiver.url, events: ['task.created'] })
      .expect(201);
    await createTask(t, c, { title: 'before' });
    await receiver.waitFor((all) => all.length >= 1);
    await t.http().delete(`/api/v1/keys/${key.id}`).set('Cookie', session.cookie).expect(200);
    await createTask(t, c, { title: 'after' });
    await sleep(1000);
    expect(receiver.received.map((r) => r.event.data.title)).toEqual(['before']);
  });

  it('does not follow a redirect: a 3xx is a failed attempt, tried again', async () => {
    const c = await t.caller();
    const sub = await subscribe(c, { events: ['task.created'] });
    let n = 0;
    receiver.answer = () => (++n === 1 ? 302 : 204);
    await createTask(t, c);
    await receiver.waitFor((all) => all.length >= 2);
    // The worker records the second attempt once the receiver's 204 is back, just after it arrived.
    const log = async () =>
      (await t.http().get(`/api/v1/webhooks/${sub.id}/deliveries?limit=10`).set('Authorization', c.auth).expect(200))
        .body.items;
    const items = await pollUntil(log, (entries) => entries.length >= 2);
    expect(items.map((d: any) => [d.attempt, d.statusCode, d.error])).toEqual([
      [2, 204, null],
      [1, 302, 'redirect not followed'],
    ]);
  });

  it('disables a subscription whose deliveries have failed for 5 days, with a reason, and sends it nothing more', async () => {
    const c = await t.caller();
    const sub = await subscribe(c, { events: ['task.created'] });
    receiver.answer = () => 500;
    await t.db
      .updateTable('webhook_subscriptions' as any)
      .set({ failing_since: new Date(Date.now() - 5 * 86_400_000 - 60_000).toISOString() } as any)
      .where('id', '=', sub.id)
      .execute();
    await createTask(t, c, { title: 'one' });
    await receiver.waitFor((all) => all.length >= 1);
    await sleep(500);
    const got = await t.http().get(`/api/v1/webhooks/${sub.id}`).set('Authorization', c.auth).expect(200);
    expect(got.body.enabled).toBe(false);
    expect(got.body.disabledReason).toMatch(/5 days/);
    await createTask(t, c, { title: 'two' });
    await sleep(800);
    expect(receiver.received).toHaveLength(1);
  });

  it('sends a ping from POST /:id/test and counts deliveries in /metrics', async () => {
    const c = await t.caller();
    const sub = await subscribe(c, { events: ['task.created'] });
    const res = await t.http().post(`/api/v1/webhooks/${sub.id}/test`).set('Authorization', c.auth);
    expect(res.status).toBe(202);
    await receiver.waitFor((all) => all.length >= 1);
    expect(receiver.received[0]!.event).toMatchObject({ type: 'ping', data: { subscriptionId: sub.id } });
    expect(receiver.received[0]!.id).toBe(res.body.eventId);
    const metrics = await t.raw().get('/metrics');
    expect(metrics.text).toMatch(/webhook_deliveries_total\{outcome="delivered"[^}]*\} [1-9]/);
    expect(metrics.text).toMatch(/webhook_queue_age_seconds\{[^}]*\} \d/);
  });
});

describe('stopping the delivery worker', () => {
  it('finishes its deliveries in flight: every job is released, and nothing fails after it stopped', async () => {
    // A second process on the same database, with the default 8 workers: every one of its jobs
    // ends at once when it stops, so their completions contend for its queue connections.
    const other = await startTestApp({ WEBHOOK_ALLOW_PRIVATE: '1' }, { shareWith: t, webhooks: true });
    receiver.answer = () => new Promise((resolve) => setTimeout(() => resolve(204), 300));
    for (let i = 0; i < 16; i++) {
      const c = await t.caller();
      await subscribe(c, { events: ['task.created'] });
      await createTask(t, c);
    }
    await receiver.waitFor((all) => all.length >= 4, 10_000);
    await other.close();
    // A completion left waiting for a connection of the ended pool failed 5 s later, as an
    // unhandled rejection (Jest fails the test for it), and its job stayed locked.
    await sleep(6_000);
    const { rows } = await sql<{
      n: number;
    }>`select count(*)::int as n from tasks_worker._private_jobs where locked_by is not null and locked_at < now() - interval '6 seconds'`.execute(
      t.db,
    );
    expect(rows[0]!.n).toBe(0);
  }, 40_000);
});

describe('who and what changed', () => {
  it("names the key or session that made each change, and an edit's previous holds only the fields it changed", async () => {
    const c = await t.caller();
    const p = await principalsOf(t, '/api/v1/keys', c.accountId);
    await subscribe(c);
    const task = await createTask(t, c, { title: 'before', priority: 'low' });
    await t
      .http()
      .patch(`/api/v1/tasks/${task.id}`)
      .set('Authorization', p.key.auth)
      .send({ title: 'after' })
      .expect(200);
    await t
      .http()
      .patch(`/api/v1/tasks/${task.id}`)
      .set('Cookie', p.cookie)
      .send({ priority: 'high', notes: task.notes })
      .expect(200);
    await t.http().post(`/api/v1/tasks/${task.id}/complete`).set('Cookie', p.cookie).expect(200);
    await receiver.waitFor((all) => all.length >= 4);
    const events = receiver.received.map((r) => r.event as Record<string, any>);
    expect(events.map((e) => [e.type, e.actor, e.previous])).toEqual([
      ['task.created', { type: 'key', id: expect.any(String) }, undefined],
      ['task.updated', { type: 'key', id: p.key.id }, { title: 'before' }],
      ['task.updated', { type: 'session', id: p.sessionId }, { priority: 'low' }],
      ['task.completed', { type: 'session', id: p.sessionId }, { completedAt: null }],
    ]);
    expect(events[0]!.actor.id).not.toBe(p.key.id);
  });
});

describe('creates made by one statement built once', () => {
  it('give each create its own task, event id, time, actor and key, whichever shape came first', async () => {
    const c = await t.caller();
    const p = await principalsOf(t, '/api/v1/keys', c.accountId);
    await subscribe(c, { events: ['task.created'] });
    const create = (auth: ['Authorization' | 'Cookie', string], body: object, key?: string) => {
      const req = t.http().post('/api/v1/tasks').set(auth[0], auth[1]);
      return (key ? req.set('Idempotency-Key', key) : req).send(body).expect(201);
    };
    const first = await create(['Authorization', p.key.auth], { title: 'first', priority: 'low' }, 'key-1');
    const second = await create(['Cookie', p.cookie], { title: 'second', tags: ['b'] }, 'key-2');
    const sub = await create(['Authorization', p.key.auth], { title: 'under', parentId: first.body.item.id }, 'key-3');
    const bare = await create(['Cookie', p.cookie], { title: 'bare' });
    // A key's answer is its own create's, not the first one's.
    const again = await create(['Cookie', p.cookie], { title: 'second', tags: ['b'] }, 'key-2');
    expect(again.body.item).toEqual(second.body.item);
    expect(again.headers['idempotent-replayed']).toBe('true');

    await receiver.waitFor((all) => all.length >= 4);
    const events = receiver.received.map((r) => ({ id: r.id, ...r.event }));
    expect(events.map((e) => [e.data.title, e.data.priority, e.data.tags, e.data.parentId, e.actor])).toEqual([
      ['first', 'low', [], null, { type: 'key', id: p.key.id }],
      ['second', null, ['b'], null, { type: 'session', id: p.sessionId }],
      ['under', null, [], first.body.item.id, { type: 'key', id: p.key.id }],
      ['bare', null, [], null, { type: 'session', id: p.sessionId }],
    ]);
    expect(events.map((e) => e.data.id)).toEqual([first, second, sub, bare].map((r) => r.body.item.id));
    expect(new Set(events.map((e) => e.id)).size).toBe(4);
    const times = events.map((e) => Date.parse(e.timestamp));
    expect([...times].sort((a, b) => a - b)).toEqual(times);
    expect(new Set(times).size).toBe(4);
  });
});
