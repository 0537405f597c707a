import { sql } from 'kysely';
import * as oneStatement from '../src/db/migrations/2026_11_25_1000_idempotency_one_statement.js';
import * as answerAsBody from '../src/db/migrations/2026_11_27_0900_kept_answer_as_body.js';
import { sweepExpiredKeys } from '../src/db/idempotency.repository.js';
import { keySweepJob } from '../src/idempotency.js';
import { startTestApp, type Caller, type TestApp } from './helpers/harness.js';

const countTitled = async (t: TestApp, c: Caller, title: string) =>
  (
    await t.db
      .selectFrom('tasks')
      .select('id')
      .where('workspace_id', '=', c.workspaceId)
      .where('title', '=', title)
      .execute()
  ).length;

describe.each([
  ['Redis', false],
  ['the in-process store (no REDIS_URL)', true],
])('POST /api/v1/tasks with Idempotency-Key, records in %s', (_store, withoutRedis) => {
  let t: TestApp;
  let c: Caller;
  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMIT_PER_MINUTE: '100000' }, { withoutRedis });
    c = await t.caller();
  });
  afterAll(() => t.close());
  const post = (key: string, body: object, caller: Caller = c) =>
    t.http().post('/api/v1/tasks').set('Authorization', caller.auth).set('Idempotency-Key', key).send(body);

  it('replays a create with the same key and body: same status and body, one task', async () => {
    const first = await post('k-replay', { title: 'once', tags: ['a'] }).expect(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const again = await post('k-replay', { tags: ['a'], title: 'once' }).expect(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.headers.etag).toBe(first.headers.etag);
    expect(await countTitled(t, c, 'once')).toBe(1);
  });

  it('answers 409 idempotency_key_conflict for the same key with another body', async () => {
    await post('k-conflict', { title: 'first body' }).expect(201);
    const res = await post('k-conflict', { title: 'second body' }).expect(409);
    expect(res.body.error.code).toBe('idempotency_key_conflict');
    expect(await countTitled(t, c, 'second body')).toBe(0);
    // A body the create would refuse is still another body under a used key.
    expect((await post('k-conflict', { title: 'third body', priority: 'urgent' }).expect(409)).body.error.code).toBe(
      'idempotency_key_conflict',
    );
  });

  it('releases the key when the create fails, so a corrected retry creates the task', async () => {
    const failed = await post('k-retry', { title: 'retry me', priority: 'urgent' }).expect(422);
    expect(failed.body.error.code).toBe('invalid_priority');
    const ok = await post('k-retry', { title: 'retry me', priority: 'high' }).expect(201);
    expect(ok.headers['idempotent-replayed']).toBeUndefined();
    expect(await countTitled(t, c, 'retry me')).toBe(1);
  });

  it('keeps keys apart per account', async () => {
    const other = await t.caller();
    await post('k-shared', { title: 'mine' }).expect(201);
    const theirs = await post('k-shared', { title: 'theirs' }, other).expect(201);
    expect(theirs.headers['idempotent-replayed']).toBeUndefined();
    expect(await countTitled(t, other, 'theirs')).toBe(1);
  });

  it('answers 400 for a key longer than 200 characters or empty, and accepts 200', async () => {
    const long = await post('k'.repeat(201), { title: 'x' }).expect(400);
    expect(long.body.error).toMatchObject({
      code: 'validation_failed',
      details: [{ path: 'Idempotency-Key', message: expect.any(String) }],
    });
    await post('', { title: 'x' }).expect(400);
    await post('k'.repeat(200), { title: 'x' }).expect(201);
  });

  it('creates exactly one task for 10 concurrent requests with one key', async () => {
    const results = await Promise.all(Array.from({ length: 10 }, () => post('k-race', { title: 'raced' })));
    const created = results.filter((r) => r.status === 201);
    expect(created.length).toBeGreaterThanOrEqual(1);
    for (const r of created) expect(r.body).toEqual(created[0]!.body);
    expect(created.filter((r) => r.headers['idempotent-replayed'] === undefined)).toHaveLength(1);
    for (const r of results.filter((r) => r.status !== 201)) {
      expect(r.status).toBe(409);
      expect(r.body.error.code).toBe('idempotency_request_in_progress');
    }
    expect(await countTitled(t, c, 'raced')).toBe(1);
  });

  it("keeps the key with the task in Postgres, unique per account, in the create's transaction", async () => {
    const first = await post('k-kept', { title: 'kept in postgres' }).expect(201);
    const rows = await t.db
      .selectFrom('task_idempotency_keys')
      .select(['task_id', 'status'])
      .where('account_id', '=', c.accountId)
      .where('task_id', '=', first.body.item.id)
      .execute();
    expect(rows).toEqual([{ task_id: first.body.item.id, status: 201 }]);
    // A create that fails keeps no key.
    await post('k-kept-failed', { title: 'bad', priority: 'urgent' }).expect(422);
    expect(
      await t.db
        .selectFrom('task_idempotency_keys')
        .select('task_id')
        .where('account_id', '=', c.accountId)
        .where('task_id', 'is', null)
        .execute(),
    ).toEqual([]);
  });
});

describe('POST /api/v1/tasks with Idempotency-Key after Redis came back empty', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMIT_PER_MINUTE: '100000' });
  });
  afterAll(() => t.close());
  /** Redis restarted empty (or failed over): every key of the service is gone. */
  const emptyRedis = async () => {
    const keys = await t.redis.keys(`${t.config.redisPrefix}*`);
    if (keys.length > 0) await t.redis.del(...keys);
  };

  it('replays the first 201 with the same id when Redis comes back empty', async () => {
    const c = await t.caller();
    const post = (body: object) =>
      t.http().post('/api/v1/tasks').set('Authorization', c.auth).set('Idempotency-Key', 'survives-redis').send(body);
    const first = await post({ title: 'exactly once' }).expect(201);
    await emptyRedis();
    const again = await post({ title: 'exactly once' }).expect(201);
    // The first answer as sent, byte for byte (fields in the same order too).
    expect(again.text).toBe(first.text);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(await countTitled(t, c, 'exactly once')).toBe(1);
    // Another body under the same key is still a conflict.
    await emptyRedis();
    expect((await post({ title: 'another' }).expect(409)).body.error.code).toBe('idempotency_key_conflict');
  });

  it('creates one task for 10 concurrent replays of a key Redis lost', async () => {
    const c = await t.caller();
    const post = () =>
      t
        .http()
        .post('/api/v1/tasks')
        .set('Authorization', c.auth)
        .set('Idempotency-Key', 'lost-and-raced')
        .send({ title: 'lost and raced' });
    const first = await post().expect(201);
    await emptyRedis();
    const results = await Promise.all(Array.from({ length: 10 }, post));
    for (const r of results) {
      expect([201, 409]).toContain(r.status);
      if (r.status === 201) expect(r.body.item.id).toBe(first.body.item.id);
    }
    expect(await countTitled(t, c, 'lost and raced')).toBe(1);
  });

  it("takes over a key kept more than 24 hours ago; the worker's sweep deletes expired keys, oldest first, in batches", async () => {
    const c = await t.caller();
    const other = await t.caller();
    const post = (caller: Caller, key: string, title: string) =>
      t.http().post('/api/v1/tasks').set('Authorization', caller.auth).set('Idempotency-Key', key).send({ title });
    const old = await post(c, 'a-day-old', 'yesterday').expect(201);
    for (let i = 0; i < 12; i++) await post(other, `other-${i}`, `other ${i}`).expect(201);
    const young = await post(other, 'just-kept', 'young').expect(201);
    // A day passes for all but the last key; Redis forgot them too.
    await sql`update task_idempotency_keys set created_at = now() - interval '25 hours'
      where account_id in (${c.accountId}, ${other.accountId}) and task_id <> ${young.body.item.id}::uuid`.execute(
      t.db,
    );
    await emptyRedis();
    const kept = () =>
      t.db
        .selectFrom('task_idempotency_keys')
        .select(['account_id', 'task_id'])
        .where('account_id', 'in', [c.accountId, other.accountId])
        .execute();
    expect(await kept()).toHaveLength(14);

    // The same key with another body is a new create now, not a conflict; a create sweeps nothing.
    const fresh = await post(c, 'a-day-old', 'today').expect(201);
    expect(fresh.body.item.id).not.toBe(old.body.item.id);
    expect(fresh.headers['idempotent-replayed']).toBeUndefined();
    let rows = await kept();
    expect(rows).toHaveLength(14);
    expect(rows).toContainEqual({ account_id: c.accountId, task_id: fresh.body.item.id });

    // The sweep takes the oldest expired keys first, up to its batch, of any account.
    await sql`update task_idempotency_keys set created_at = now() - interval '30 hours' where task_id = ${fresh.body.item.id}::uuid`.execute(
      t.db,
    );
    expect(await sweepExpiredKeys(t.db, 1)).toBe(1);
    expect(await kept()).not.toContainEqual({ account_id: c.accountId, task_id: fresh.body.item.id });
    // The worker's job deletes the rest, with 2,500 more (three of its batches of 1,000); the key
    // kept just now stays and still replays.
    await sql`insert into task_idempotency_keys (account_id, key_hash, fingerprint, created_at)
      select ${other.accountId}::uuid, sha256(i::text::bytea), 'f', now() - interval '2 days' from generate_series(1, 2500) i`.execute(
      t.db,
    );
    await keySweepJob(t.db).run();
    rows = await kept();
    expect(rows).toEqual([{ account_id: other.accountId, task_id: young.body.item.id }]);
    const again = await post(other, 'just-kept', 'young').expect(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
  });

  it('replays, byte for byte, an answer kept by the previous version (the response body, which the 2026_11_25_1000 migration rewrites)', async () => {
    const c = await t.caller();
    const post = () =>
      t
        .http()
        .post('/api/v1/tasks')
        .set('Authorization', c.auth)
        .set('Idempotency-Key', 'from-before')
        .send({ title: 'kept before', tags: ['x'] });
    const first = await post().expect(201);
    // Back to the shape the version before those kept: the body it answered.
    await answerAsBody.down(t.db);
    await oneStatement.down(t.db);
    try {
      const kept = await t.db
        .selectFrom('task_idempotency_keys')
        .select('response')
        .where('account_id', '=', c.accountId)
        .executeTakeFirstOrThrow();
      expect(kept.response).toMatchObject({ item: { id: first.body.item.id, title: 'kept before', tags: ['x'] } });
    } finally {
      await oneStatement.up(t.db);
      await answerAsBody.up(t.db);
    }
    const again = await post().expect(201);
    expect(again.text).toBe(first.text);
    expect(again.headers['idempotent-replayed']).toBe('true');
  });

  it('keeps the answer as the API body it replays, versioned: { v: 1, status, body }', async () => {
    const c = await t.caller();
    const first = await t
      .http()
      .post('/api/v1/tasks')
      .set('Authorization', c.auth)
      .set('Idempotency-Key', 'as-body')
      .send({ title: 'as body', dueAt: '2031-05-01T09:30:00Z', tags: ['q"uote', 'ü'] })
      .expect(201);
    const kept = await t.db
      .selectFrom('task_idempotency_keys')
      .select('response')
      .where('account_id', '=', c.accountId)
      .executeTakeFirstOrThrow();
    expect(kept.response).toEqual({ v: 1, status: 201, body: first.body });
  });

  it('replays, byte for byte, an answer the previous version kept as the created row (row_to_json; the 2026_11_27_0900 migration rewrites it)', async () => {
    const c = await t.caller();
    const post = () =>
      t
        .http()
        .post('/api/v1/tasks')
        .set('Authorization', c.auth)
        .set('Idempotency-Key', 'as-row')
        .send({ title: 'kept as a row', dueAt: '2031-05-01T09:30:00.5Z', notes: null, tags: ['y'] });
    const first = await post().expect(201);
    // What the previous version's one-statement create kept: row_to_json of the row it inserted.
    await sql`
      update task_idempotency_keys k set response = (
        select row_to_json(r) from (
          select id, title, notes, priority, due_at, completed_at, tags, created_at, updated_at, parent_id, goal_id, recurrence, location, assignee_id
          from tasks where id = k.task_id) r)
      where k.account_id = ${c.accountId}`.execute(t.db);
    await answerAsBody.up(t.db);
    const again = await post().expect(201);
    expect(again.text).toBe(first.text);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.headers.etag).toBe(first.headers.etag);
  });

  it('replays from Postgres in single-instance mode after a restart (the in-process store is empty)', async () => {
    const c = await t.caller();
    const single = await startTestApp({ RATE_LIMIT_PER_MINUTE: '100000' }, { withoutRedis: true, shareWith: t });
    const restarted = await startTestApp({ RATE_LIMIT_PER_MINUTE: '100000' }, { withoutRedis: true, shareWith: t });
    try {
      const post = (app: TestApp) =>
        app
          .http()
          .post('/api/v1/tasks')
          .set('Authorization', c.auth)
          .set('Idempotency-Key', 'across-restart')
          .send({ title: 'across restart' });
      const first = await post(single).expect(201);
      const again = await post(restarted).expect(201);
      expect(again.body.item.id).toBe(first.body.item.id);
      expect(await countTitled(t, c, 'across restart')).toBe(1);
    } finally {
      await single.close();
      await restarted.close();
    }
  });
});

describe('idempotency records', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('are kept in Postgres only, the key hashed: Redis holds none', async () => {
    const c = await t.caller();
    const res = await t
      .http()
      .post('/api/v1/tasks')
      .set('Authorization', c.auth)
      .set('Idempotency-Key', 'secret-ish key')
      .send({ title: 'kept' })
      .expect(201);
    expect(await t.redis.keys(`${t.config.redisPrefix}idem:*`)).toEqual([]);
    const rows = await t.db
      .selectFrom('task_idempotency_keys')
      .select(['key_hash', 'task_id'])
      .where('account_id', '=', c.accountId)
      .execute();
    expect(rows).toEqual([{ key_hash: expect.any(Buffer), task_id: res.body.item.id }]);
    expect(rows[0]!.key_hash.toString('utf8')).not.toContain('secret-ish');
  });
});
