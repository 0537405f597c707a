import { loadConfig, startTestApp, type TestApp } from './helpers/harness.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ RATE_LIMIT_PER_MINUTE: '5' });
});
afterAll(() => t.close());

describe('rate limit', () => {
  it('answers 429 with Retry-After past RATE_LIMIT_PER_MINUTE per account, other accounts unaffected', async () => {
    const c = await t.caller();
    for (let i = 0; i < 5; i++) await t.http().get('/api/clipboard').set('Authorization', c.auth).expect(200);
    const limited = await t
      .http()
      .post('/api/clipboard')
      .set('Authorization', c.auth)
      .send({ type: 'text', content: 'x', source: 'api' })
      .expect(429);
    expect(limited.body).toEqual({ error: 'Too many requests; retry later' });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    const other = await t.caller();
    await t.http().get('/api/snippets').set('Authorization', other.auth).expect(200);
  });

  it('defaults to 300 per minute', () => {
    expect(t.config.rateLimits.api).toBe(5);
    expect(loadConfig({ DATABASE_URL: 'postgres://x@localhost/db' }).rateLimits.api).toBe(300);
  });
});
