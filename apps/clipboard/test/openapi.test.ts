import { startTestApp, type TestApp } from './helpers/harness.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

describe('GET /openapi.json', () => {
  it('documents every served path, with the error statuses of each /api operation', async () => {
    const res = await t.http().get('/openapi.json').expect(200);
    expect(res.body.openapi).toBe('3.1.0');
    expect(Object.keys(res.body.paths).sort()).toEqual([
      '/api/clipboard', '/api/clipboard/bulk', '/api/clipboard/pull', '/api/clipboard/pull/stream', '/api/clipboard/sync',
      '/api/clipboard/webhooks', '/api/clipboard/webhooks/{id}', '/api/clipboard/webhooks/{id}/deliveries', '/api/clipboard/webhooks/{id}/rotate-secret', '/api/clipboard/webhooks/{id}/test',
      '/api/clipboard/{id}', '/api/clipboard/{id}/favorite',
      '/api/settings', '/api/settings/keys', '/api/settings/keys/{id}', '/api/snippets', '/api/snippets/{id}',
      '/auth/clipboard/apps', '/auth/clipboard/apps/{id}', '/auth/clipboard/login', '/auth/clipboard/logout', '/auth/clipboard/me', '/auth/clipboard/signup',
      '/healthz', '/metrics', '/openapi.json', '/readyz',
    ]);
    for (const [path, ops] of Object.entries<any>(res.body.paths)) {
      if (!path.startsWith('/api/')) continue;
      for (const op of Object.values<any>(ops)) {
        expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['401', '403', '429', '500']));
        if (op.requestBody) expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['400', '413']));
        if (path.includes('{id}')) expect(Object.keys(op.responses)).toContain('404');
      }
    }
    expect(res.body.info.description).toMatch(/Conflict rule/);
  });
});
