import { startTestApp, type Caller, type TestApp } from './helpers/harness.js';

const countTitled = async (t: TestApp, c: Caller, title: string) =>
  (await t.db.selectFrom('tasks').select('id').where('workspace_id', '=', c.workspaceId).where('title', '=', title).execute()).length;

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
    expect(long.body.error).toMatchObject({ code: 'validation_failed', details: [{ path: 'Idempotency-Key', message: expect.any(String) }] });
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
});

describe('idempotency records in Redis', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('are kept 24 hours under the service prefix, per workspace and account, the key hashed', async () => {
    const c = await t.caller();
    await t.http().post('/api/v1/tasks').set('Authorization', c.auth).set('Idempotency-Key', 'secret-ish key').send({ title: 'ttl' }).expect(201);
    const keys = await t.redis.keys(`${t.config.redisPrefix}idem:${c.workspaceId}:${c.accountId}:*`);
    expect(keys).toHaveLength(1);
    expect(keys[0]).not.toContain('secret-ish');
    const ttl = await t.redis.ttl(keys[0]!);
    expect(ttl).toBeGreaterThan(24 * 3600 - 60);
    expect(ttl).toBeLessThanOrEqual(24 * 3600);
  });
});
