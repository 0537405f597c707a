import { sql } from 'kysely';
import { expectOneWrite } from '@app/devstack';
import { nextBatch } from '@app/auth/webhooks';
import { startTestApp, type Caller, type TestApp } from './helpers/harness.js';
import { createTask } from './helpers/factories.js';

/**
 * Each write of the happy path costs at most one Postgres round trip and one Redis round trip,
 * counted from the clients' own protocol traffic (see devstack's round-trips.ts), so a change
 * that adds a statement, a BEGIN/COMMIT pair or a second Redis call fails here.
 */
describe('round trips per write', () => {
  let t: TestApp;
  let c: Caller;
  beforeAll(async () => {
    // A subscription to a local URL (nothing delivers here: the worker is not started).
    t = await startTestApp({ RATE_LIMIT_PER_MINUTE: '100000', WEBHOOK_ALLOW_PRIVATE: '1' });
    c = await t.caller();
  });
  afterAll(() => t.close());

  // Issue 33's targets. A create of an account nobody watches (no subscriber to task.created) is
  // one INSERT; with a key, one statement inserts the task and keeps the key with its answer.
  // Redis: see expectOneWrite.
  it('a create without Idempotency-Key makes one Postgres round trip and at most one to Redis', async () => {
    const seen = await t.roundTrips.perRequest((i) =>
      t
        .http()
        .post('/api/v1/tasks')
        .set('Authorization', c.auth)
        .send({ title: `plain ${i}`, tags: ['rt'] })
        .expect(201),
    );
    expectOneWrite(seen);
  });

  it('a create with Idempotency-Key makes one Postgres round trip and at most one to Redis, and so does its replay', async () => {
    const seen = await t.roundTrips.perRequest((i) =>
      t
        .http()
        .post('/api/v1/tasks')
        .set('Authorization', c.auth)
        .set('Idempotency-Key', `rt-${i}`)
        .send({ title: `keyed ${i}` })
        .expect(201),
    );
    expectOneWrite(seen);
    const replays = await t.roundTrips.perRequest(
      () =>
        t
          .http()
          .post('/api/v1/tasks')
          .set('Authorization', c.auth)
          .set('Idempotency-Key', 'rt-2')
          .send({ title: 'keyed 2' })
          .expect(201)
          .expect('Idempotent-Replayed', 'true'),
      1,
    );
    expectOneWrite(replays);
  });

  // The keyed create is one statement with CTEs (WITH ... INSERT): it runs prepared, so Postgres
  // parses and plans it once per connection, not on every create (in the bench that was about
  // half of its Postgres CPU per create).
  it('a keyed create, once its connection has run one, sends no Parse: it runs as a prepared statement', async () => {
    const create = (n: number) =>
      t
        .http()
        .post('/api/v1/tasks')
        .set('Authorization', c.auth)
        .set('Idempotency-Key', `prepared-${n}`)
        .send({ title: `prepared ${n}` })
        .expect(201);
    expect(await t.roundTrips.parsedWhenRepeated(create)).toEqual([0, 0]);
  });

  // A watched account's create: one statement inserts the task with its event (not a transaction
  // of five round trips); the process remembers the account is watched, so only its first create
  // tries the unwatched INSERT first. The event's body is what the API answered, written as every
  // event body is (compact JSON: type, timestamp, data). Once nobody subscribes, creates record
  // nothing and go back to the unwatched INSERT.
  it('a create of an account with a task.created subscriber makes one Postgres round trip, and records the answer as the event', async () => {
    const w = await t.caller();
    const sub = await t
      .http()
      .post('/api/v1/webhooks')
      .set('Authorization', w.auth)
      .send({ url: 'http://127.0.0.1:9/hook', events: ['task.created'] })
      .expect(201);
    const created = (title: string) =>
      t
        .http()
        .post('/api/v1/tasks')
        .set('Authorization', w.auth)
        .send({ title, tags: ['a', 'b'], dueAt: '2031-05-01T09:30:00Z' })
        .expect(201);
    const eventsOf = async (taskId: string) =>
      (
        await sql<{
          body: string;
        }>`select d.body from webhook_deliveries d where d.subscription_id = ${sub.body.id} and d.body like ${`%${taskId}%`}`.execute(
          t.db,
        )
      ).rows;

    let last: { id: string } | undefined;
    const seen = await t.roundTrips.perRequest(async (i) => {
      last = (await created(`watched ${i}`)).body.item;
    });
    expectOneWrite(seen);
    const rows = await eventsOf(last!.id);
    expect(rows).toHaveLength(1);
    const event = JSON.parse(rows[0]!.body);
    expect(rows[0]!.body).toBe(JSON.stringify(event));
    expect(event).toEqual({
      type: 'task.created',
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT[\d:.]+Z$/),
      // The key that made it (DESIGN.md "Webhooks": every payload says who).
      actor: { type: 'key', id: expect.stringMatching(/^[0-9a-f-]{36}$/) },
      data: last,
    });

    await t.http().delete(`/api/v1/webhooks/${sub.body.id}`).set('Authorization', w.auth).expect(204);
    const unwatched = (await created('no longer watched')).body.item;
    expect(await eventsOf(unwatched.id)).toHaveLength(0);
    expectOneWrite(await t.roundTrips.perRequest((i) => created(`unwatched ${i}`), 1));
  });

  // Every create is the one repository statement: with a key and a subscriber too (it was a
  // transaction: BEGIN, INSERT, the key with the event, COMMIT), and the event, the answer and the
  // kept answer are one task.
  it('a create with Idempotency-Key of an account with a task.created subscriber makes one Postgres round trip, its event and kept answer the answer', async () => {
    const w = await t.caller();
    const sub = await t
      .http()
      .post('/api/v1/webhooks')
      .set('Authorization', w.auth)
      .send({ url: 'http://127.0.0.1:9/hook', events: ['task.created'] })
      .expect(201);
    let last: { id: string } | undefined;
    const seen = await t.roundTrips.perRequest(async (i) => {
      last = (
        await t
          .http()
          .post('/api/v1/tasks')
          .set('Authorization', w.auth)
          .set('Idempotency-Key', `watched-${i}`)
          .send({ title: `watched keyed ${i}`, dueAt: '2031-05-01T09:30:00Z' })
          .expect(201)
      ).body.item;
    });
    expectOneWrite(seen);
    const events = (
      await sql<{
        body: string;
      }>`select d.body from webhook_deliveries d where d.subscription_id = ${sub.body.id} and d.body like ${`%${last!.id}%`}`.execute(
        t.db,
      )
    ).rows;
    expect(events.map((e) => JSON.parse(e.body).data)).toEqual([last]);
    const kept = await t.db
      .selectFrom('task_idempotency_keys')
      .select('response')
      .where('account_id', '=', w.accountId)
      .where('task_id', '=', last!.id)
      .executeTakeFirstOrThrow();
    expect(kept.response).toEqual({ v: 1, status: 201, body: { item: last } });
  });

  // The delivery worker reads what it sends next (the subscription, its creator's scopes now and
  // its pending deliveries) in one statement, which runs prepared: planning it on every batch had
  // taken three times as long as running it.
  it("the webhook worker reads a subscription's next batch in one Postgres round trip, as a prepared statement", async () => {
    const w = await t.caller();
    const sub = (
      await t
        .http()
        .post('/api/v1/webhooks')
        .set('Authorization', w.auth)
        .send({ url: 'http://127.0.0.1:9/hook', events: ['task.created'] })
        .expect(201)
    ).body;
    const task = (
      await t.http().post('/api/v1/tasks').set('Authorization', w.auth).send({ title: 'to deliver' }).expect(201)
    ).body.item;

    let batch: Awaited<ReturnType<typeof nextBatch>>;
    expect(await t.roundTrips.measure(async () => (batch = await nextBatch(t.db, sub.id, 100)))).toEqual({
      postgres: 1,
      redis: 0,
    });
    expect(batch!.sub).toMatchObject({ id: sub.id, enabled: true, url: 'http://127.0.0.1:9/hook' });
    expect(batch!.scopes).toContain('tasks:read');
    expect(batch!.pending.map((d) => [d.type, JSON.parse(d.body).data.id])).toEqual([['task.created', task.id]]);
    expect(await t.roundTrips.parsedWhenRepeated(() => nextBatch(t.db, sub.id, 100))).toEqual([0, 0]);
  });

  // A plain edit of an account nobody watches is one UPDATE, If-Match in its condition.
  it('a PATCH with If-Match makes one Postgres round trip and at most one to Redis', async () => {
    let task = await createTask(t, c, { title: 'patched' });
    const seen = await t.roundTrips.perRequest(async (i) => {
      const res = await t
        .http()
        .patch(`/api/v1/tasks/${task.id}`)
        .set('Authorization', c.auth)
        .set('If-Match', `"${task.updatedAt}"`)
        .send({ title: `patched ${i}` })
        .expect(200);
      task = res.body.item;
    });
    expectOneWrite(seen);
  });

  it('a PATCH with If-Match, once its connection has run one, sends no Parse: it runs as a prepared statement', async () => {
    let task = await createTask(t, c, { title: 'prepared patch' });
    const patch = async (title: string) => {
      task = (
        await t
          .http()
          .patch(`/api/v1/tasks/${task.id}`)
          .set('Authorization', c.auth)
          .set('If-Match', `"${task.updatedAt}"`)
          .send({ title })
          .expect(200)
      ).body.item;
    };
    expect(await t.roundTrips.parsedWhenRepeated((n) => patch(`prepared ${n}`))).toEqual([0, 0]);
  });
});
