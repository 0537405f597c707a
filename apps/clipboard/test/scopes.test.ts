import { randomUUID } from 'node:crypto';
import { startTestApp, type TestApp } from './helpers/harness.js';
import { HIGH_LIMITS } from './helpers/factories.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp(HIGH_LIMITS);
});
afterAll(() => t.close());

const ALL = ['clipboard:read', 'clipboard:write', 'snippets:read', 'snippets:write', 'settings:read', 'settings:write'];

/** Every endpoint of the spec with the scope it names (`also`: one more it needs) and a request that passes validation. */
const ENDPOINTS: {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  path: string;
  scope: string;
  also?: string;
  body?: object;
  ok: number;
}[] = [
  { method: 'get', path: '/api/clipboard', scope: 'clipboard:read', ok: 200 },
  {
    method: 'post',
    path: '/api/clipboard',
    scope: 'clipboard:write',
    body: { type: 'text', content: 'x', source: 'api' },
    ok: 201,
  },
  { method: 'patch', path: `/api/clipboard/${randomUUID()}/favorite`, scope: 'clipboard:write', ok: 404 },
  { method: 'delete', path: `/api/clipboard/${randomUUID()}`, scope: 'clipboard:write', ok: 404 },
  { method: 'delete', path: '/api/clipboard/bulk', scope: 'clipboard:write', body: { ids: [randomUUID()] }, ok: 200 },
  { method: 'delete', path: '/api/clipboard', scope: 'clipboard:write', ok: 200 },
  { method: 'get', path: '/api/snippets', scope: 'snippets:read', ok: 200 },
  { method: 'post', path: '/api/snippets', scope: 'snippets:write', body: { name: 'n', content: 'c' }, ok: 201 },
  { method: 'put', path: '/api/snippets', scope: 'snippets:write', body: { items: [] }, ok: 200 },
  { method: 'delete', path: `/api/snippets/${randomUUID()}`, scope: 'snippets:write', ok: 404 },
  { method: 'get', path: '/api/settings', scope: 'settings:read', ok: 200 },
  { method: 'put', path: '/api/settings', scope: 'settings:write', body: { captureEnabled: false }, ok: 200 },
  // Sync answers the server's changes, item contents included: it needs clipboard:read as well.
  {
    method: 'post',
    path: '/api/clipboard/sync',
    scope: 'clipboard:write',
    also: 'clipboard:read',
    body: { changes: [] },
    ok: 200,
  },
  { method: 'get', path: '/api/clipboard/pull', scope: 'clipboard:read', ok: 200 },
];

describe('scopes', () => {
  it.each(ENDPOINTS.map((e) => [`${e.method.toUpperCase()} ${e.path.replace(/[0-9a-f-]{36}/, ':id')}`, e] as const))(
    '%s: 403 without each scope it needs, served with only those',
    async (_name, e) => {
      const needed = [e.scope, ...(e.also ? [e.also] : [])];
      for (const missing of needed) {
        const without = await t.caller(ALL.filter((s) => s !== missing));
        const req = t.http()[e.method](e.path).set('Authorization', without.auth);
        const denied = await (e.body ? req.send(e.body) : req).expect(403);
        expect(denied.body).toEqual({ error: `This request needs the scope ${missing}` });
      }

      const only = await t.caller(needed);
      const req2 = t.http()[e.method](e.path).set('Authorization', only.auth);
      await (e.body ? req2.send(e.body) : req2).expect(e.ok);
    },
  );

  it('refuses POST /api/clipboard/sync to a key holding only clipboard:write (it would answer item contents)', async () => {
    const writer = await t.caller(['clipboard:write']);
    const res = await t
      .http()
      .post('/api/clipboard/sync')
      .set('Authorization', writer.auth)
      .send({ changes: [] })
      .expect(403);
    expect(res.body).toEqual({ error: 'This request needs the scope clipboard:read' });
  });

  it("documents both scopes of sync and pull's one in their security requirement", async () => {
    const doc = (await t.http().get('/openapi.json').expect(200)).body;
    expect(doc.paths['/api/clipboard/sync'].post.security).toEqual([
      { apiKey: ['clipboard:read', 'clipboard:write'] },
      { session: [] },
    ]);
    expect(doc.paths['/api/clipboard/pull'].get.security).toEqual([{ apiKey: ['clipboard:read'] }, { session: [] }]);
  });

  it('checks the scope before the body: an invalid body from a key without the scope is 403', async () => {
    const reader = await t.caller(['clipboard:read']);
    await t
      .http()
      .post('/api/clipboard')
      .set('Authorization', reader.auth)
      .set('Content-Type', 'application/json')
      .send('{"broken')
      .expect(403);
  });

  it('lets a browser session use every endpoint', async () => {
    const { accountId } = await t.admin('create-account', '--email', `${randomUUID()}@example.test`);
    const { cookie } = await t.admin('create-session', '--account', accountId);
    for (const e of ENDPOINTS) {
      const req = t.http()[e.method](e.path).set('Cookie', cookie);
      await (e.body ? req.send(e.body) : req).expect(e.ok);
    }
  });

  it('answers 401 without credentials on every endpoint', async () => {
    for (const e of ENDPOINTS) {
      const res = await t.http()[e.method](e.path).expect(401);
      expect(res.body).toEqual({ error: expect.any(String) });
    }
  });
});
