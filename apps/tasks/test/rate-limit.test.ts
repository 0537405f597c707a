import { pollUntil } from '@app/devstack';
import { loadConfig, startTestApp, type TestApp } from './helpers/harness.js';

describe('rate limit', () => {
  let t: TestApp;
  let second: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMIT_PER_MINUTE: '3' });
    second = await startTestApp({ RATE_LIMIT_PER_MINUTE: '3' }, { shareWith: t });
  });
  afterAll(async () => {
    await second.close();
    await t.close();
  });

  it('defaults to 600 requests per account per minute', () => {
    expect(loadConfig({ DATABASE_URL: 'postgres://localhost/x' }).rateLimits.api).toBe(600);
  });

  it('answers 429 rate_limited in the envelope with Retry-After and RateLimit headers', async () => {
    const c = await t.caller();
    for (let i = 0; i < 3; i += 1) {
      const ok = await t.http().get('/api/v1/tasks').set('Authorization', c.auth).expect(200);
      expect(ok.headers['ratelimit-limit']).toBe('3');
      expect(ok.headers['ratelimit-remaining']).toBe(String(2 - i));
    }
    const res = await t
      .http()
      .post('/api/v1/tasks')
      .set('Authorization', c.auth)
      .send({ title: 'one too many' })
      .expect(429);
    expect(res.body.error).toMatchObject({
      code: 'rate_limited',
      message: expect.any(String),
      requestId: res.headers['x-request-id'],
    });
    expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(res.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect(res.headers['ratelimit-remaining']).toBe('0');
    expect(await t.db.selectFrom('tasks').select('id').where('title', '=', 'one too many').execute()).toHaveLength(0);
  });

  it('shares one budget between two instances on the same Redis', async () => {
    const c = await t.caller();
    await t.http().get('/api/v1/tasks').set('Authorization', c.auth).expect(200);
    await second.http().get('/api/v1/tasks').set('Authorization', c.auth).expect(200);
    await t.http().get('/api/v1/tasks').set('Authorization', c.auth).expect(200);
    const res = await second.http().get('/api/v1/tasks').set('Authorization', c.auth).expect(429);
    expect(res.body.error.code).toBe('rate_limited');
  });

  it('counts accounts separately', async () => {
    const a = await t.caller();
    const b = await t.caller();
    for (let i = 0; i < 3; i += 1) await t.http().get('/api/v1/tasks').set('Authorization', a.auth).expect(200);
    await t.http().get('/api/v1/tasks').set('Authorization', a.auth).expect(429);
    await t.http().get('/api/v1/tasks').set('Authorization', b.auth).expect(200);
  });

  describe("MCP requests share the account's budget", () => {
    const rpc = (auth: string, method: string, params?: object) =>
      t
        .raw()
        .post('/mcp/tasks?toolsets=all')
        .set('Authorization', auth)
        .set('Accept', 'application/json, text/event-stream')
        .send({ jsonrpc: '2.0', id: 1, method, ...(params ? { params } : {}) });

    it('counts every JSON-RPC request once, lists, prompts and pings included: the fourth in a minute is 429', async () => {
      const c = await t.caller();
      for (const method of ['tools/list', 'prompts/list', 'ping']) expect((await rpc(c.auth, method)).status).toBe(200);
      const res = await rpc(c.auth, 'tools/list');
      expect(res.status).toBe(429);
      expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect((await t.http().get('/api/v1/tasks').set('Authorization', c.auth)).status).toBe(429);
    });

    it('counts a tool call as the one REST request it makes, not twice', async () => {
      const c = await t.caller();
      for (let i = 0; i < 3; i += 1) {
        const res = await rpc(c.auth, 'tools/call', { name: 'listTasks', arguments: {} });
        expect(res.status).toBe(200);
        expect(res.body.result.isError).toBeFalsy();
      }
      expect((await rpc(c.auth, 'tools/call', { name: 'listTasks', arguments: {} })).status).toBe(429);
    });
  });

  describe('with a budget large enough for leases', () => {
    let big: TestApp;
    let bigTwin: TestApp;
    beforeAll(async () => {
      big = await startTestApp({ RATE_LIMIT_PER_MINUTE: '200' });
      bigTwin = await startTestApp({ RATE_LIMIT_PER_MINUTE: '200' }, { shareWith: big });
    });
    afterAll(async () => {
      await bigTwin.close();
      await big.close();
    });

    it('counts every request exactly on one instance, while Redis is asked for hits in leases', async () => {
      const c = await big.caller();
      for (let i = 1; i <= 200; i += 1) {
        const ok = await big.http().get('/api/v1/tasks').set('Authorization', c.auth).expect(200);
        expect(ok.headers['ratelimit-remaining']).toBe(String(200 - i));
        if (i === 100) {
          // The window's count in Redis holds every hit so far and at most one lease (32) more.
          const [key] = await big.redis.keys(`${big.config.redisPrefix}rl:api:a:${c.accountId}`);
          const counted = Number(await big.redis.get(key!));
          expect(counted).toBeGreaterThanOrEqual(100);
          expect(counted).toBeLessThanOrEqual(132);
        }
      }
      const refused = await big.http().get('/api/v1/tasks').set('Authorization', c.auth).expect(429);
      expect(refused.headers['ratelimit-remaining']).toBe('0');
    });

    it('answers from a lease taken ahead while Redis does not answer, counting exactly', async () => {
      const c = await big.caller();
      const get = () => big.http().get('/api/v1/tasks').set('Authorization', c.auth).expect(200);
      const key = `${big.config.redisPrefix}rl:api:a:${c.accountId}`;
      // Request 1 leases one hit and request 2 an eighth of what is left (24); using half of
      // those, request 14 leases the next ones in the background.
      for (let i = 1; i <= 14; i += 1) await get();
      expect(
        Number(
          await pollUntil(
            () => big.redis.get(key),
            (n) => Number(n) > 25,
          ),
        ),
      ).toBeGreaterThan(25);
      // Redis now holds every script and write for 3 s. Requests 15-40 span the end of the lease in use
      // (at 25): the one after it used to wait for Redis. (The app's own connection would queue the
      // unpause behind its held script.)
      const admin = big.redis.duplicate();
      await admin.call('client', 'pause', '3000', 'WRITE');
      try {
        for (let i = 15; i <= 40; i += 1) {
          const started = Date.now();
          const ok = await get();
          expect(ok.headers['ratelimit-remaining']).toBe(String(200 - i));
          expect(Date.now() - started).toBeLessThan(1000);
        }
      } finally {
        await admin.call('client', 'unpause');
        admin.disconnect();
      }
    });

    it('never admits more than the limit across two instances under concurrent requests', async () => {
      const c = await big.caller();
      const statuses = await Promise.all(
        Array.from(
          { length: 260 },
          async (_, i) =>
            (await (i % 2 === 0 ? big : bigTwin).raw().get('/api/v1/tasks').set('Authorization', c.auth)).status,
        ),
      );
      const admitted = statuses.filter((s) => s === 200).length;
      expect(statuses.filter((s) => s !== 200 && s !== 429)).toEqual([]);
      // Hits leased by one instance and not used when the budget ran out are lost: a few at most.
      expect(admitted).toBeLessThanOrEqual(200);
      expect(admitted).toBeGreaterThanOrEqual(190);
    });
  });
});
