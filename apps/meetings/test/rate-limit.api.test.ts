import { startTestApp, type Caller, type TestApp } from './helpers/harness.js';

let t: TestApp;
let c: Caller;
beforeAll(async () => {
  t = await startTestApp({ RATE_LIMIT_READS_PER_MINUTE: '3', RATE_LIMIT_WRITES_PER_MINUTE: '3' });
  c = await t.caller();
});
afterAll(() => t.close());

describe('rate limits per account', () => {
  it('answers the 4th read in a minute with 429, Retry-After and RateLimit headers, while writes still pass', async () => {
    for (let i = 0; i < 3; i++) await t.http().get('/api/me').set('Authorization', c.auth).expect(200);
    const limited = await t.http().get('/api/people').set('Authorization', c.auth).expect(429);
    expect(limited.body.error).toMatchObject({ code: 'rate_limited', requestId: expect.any(String) });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(limited.headers['ratelimit-limit']).toBe('3');
    expect(limited.headers['ratelimit-remaining']).toBe('0');
    // Writes have their own counter.
    for (let i = 0; i < 3; i++)
      await t
        .http()
        .post('/api/people')
        .set('Authorization', c.auth)
        .send({ name: `P${i}` })
        .expect(201);
    const writeLimited = await t
      .http()
      .post('/api/people')
      .set('Authorization', c.auth)
      .send({ name: 'late' })
      .expect(429);
    expect(writeLimited.headers['retry-after']).toBeDefined();
    expect(await t.db.selectFrom('people').select('id').where('account_id', '=', c.accountId).execute()).toHaveLength(
      3,
    );
  });

  it('counts each account separately, and a spent write budget leaves reads alone', async () => {
    const other = await t.caller();
    for (let i = 0; i < 3; i++)
      await t
        .http()
        .put(`/api/notes/2030-01-0${i + 1}`)
        .set('Authorization', other.auth)
        .send({ today: 'x' })
        .expect(201);
    await t.http().delete('/api/notes/2030-01-01').set('Authorization', other.auth).expect(429);
    await t.http().get('/api/notes').set('Authorization', other.auth).expect(200);
  });
});

describe('the network-level cap per client address', () => {
  let capped: TestApp;
  let twin: TestApp;
  beforeAll(async () => {
    const env = { RATE_LIMIT_NETWORK_PER_MINUTE: '5' };
    capped = await startTestApp(env);
    // A second instance on the same database and Redis prefix, as behind the gateway.
    twin = await startTestApp(env, { shareWith: capped });
  });
  afterAll(async () => {
    await twin?.close();
    await capped?.close();
  });

  it('counts every API request from one address, signed in or not, across instances, then answers 429', async () => {
    const a = await capped.caller();
    const b = await capped.caller();
    const client = { 'X-Forwarded-For': '198.51.100.7' };
    const statuses = [
      (await capped.http().get('/api/me').set(client).set('Authorization', a.auth)).status,
      (await twin.http().get('/api/me').set(client).set('Authorization', b.auth)).status,
      (await capped.http().get('/api/people').set(client)).status,
      (await twin.http().post('/api/people').set(client).set('Authorization', a.auth).send({ name: 'P' })).status,
      (await capped.http().get('/api/me').set(client).set('Authorization', b.auth)).status,
    ];
    expect(statuses).toEqual([200, 200, 401, 201, 200]);
    const limited = await twin.http().get('/api/me').set(client).set('Authorization', a.auth).expect(429);
    expect(limited.body.error).toMatchObject({ code: 'rate_limited', requestId: expect.any(String) });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    // Another client address has a budget of its own; health and documents are not API requests.
    await capped.http().get('/api/me').set('X-Forwarded-For', '198.51.100.8').set('Authorization', a.auth).expect(200);
    await twin.raw().get('/healthz').set(client).expect(200);
    await twin.raw().get('/openapi.json').set(client).expect(200);
  });
});
