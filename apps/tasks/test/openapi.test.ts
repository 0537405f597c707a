import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestApp, type TestApp } from './helpers/harness.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

describe('GET /openapi.json', () => {
  it('serves an OpenAPI 3.1 document listing every path the gateway routes to the service', async () => {
    const res = await t.http().get('/openapi.json').expect(200);
    expect(res.body.openapi).toBe('3.1.0');
    expect(Object.keys(res.body.paths).sort()).toEqual([
      '/api/v1/keys',
      '/api/v1/keys/{id}',
      '/api/v1/recurrence/preview',
      '/api/v1/tasks',
      '/api/v1/tasks/batch',
      '/api/v1/tasks/changes',
      '/api/v1/tasks/changes/stream',
      '/api/v1/tasks/{id}',
      '/api/v1/tasks/{id}/auto-tag',
      '/api/v1/tasks/{id}/complete',
      '/api/v1/tasks/{id}/position',
      '/api/v1/tasks/{id}/reminders',
      '/api/v1/tasks/{id}/reminders/{reminderId}',
      '/api/v1/tasks/{id}/reopen',
      '/api/v1/webhooks',
      '/api/v1/webhooks/{id}',
      '/api/v1/webhooks/{id}/deliveries',
      '/api/v1/webhooks/{id}/replay',
      '/api/v1/webhooks/{id}/rotate-secret',
      '/api/v1/webhooks/{id}/test',
      '/auth/tasks/apps',
      '/auth/tasks/apps/{id}',
      '/auth/tasks/login',
      '/auth/tasks/logout',
      '/auth/tasks/me',
      '/auth/tasks/signup',
    ]);
  });

  it('lists for each task operation every status the spec names', async () => {
    const { paths } = (await t.http().get('/openapi.json').expect(200)).body;
    const statuses = (path: string, method: string) => Object.keys(paths[path][method].responses).sort();
    const expectIncludes = (path: string, method: string, list: string[]) =>
      expect(statuses(path, method)).toEqual(expect.arrayContaining(list));
    expectIncludes('/api/v1/tasks', 'get', ['200', '400', '401', '403', '429']);
    expectIncludes('/api/v1/tasks', 'post', ['201', '400', '401', '403', '409', '422', '429']);
    expectIncludes('/api/v1/tasks/{id}', 'get', ['200', '401', '403', '404', '429']);
    expectIncludes('/api/v1/tasks/{id}', 'patch', ['200', '400', '401', '403', '404', '412', '422', '429']);
    expectIncludes('/api/v1/tasks/{id}', 'delete', ['200', '401', '403', '404', '412', '429']);
    expectIncludes('/api/v1/tasks/{id}/complete', 'post', ['200', '401', '403', '404', '409', '412', '429']);
    expectIncludes('/api/v1/tasks/{id}/reopen', 'post', ['200', '401', '403', '404', '409', '412', '429']);
    expectIncludes('/api/v1/tasks/{id}/auto-tag', 'post', ['200', '401', '403', '404', '429']);
    expectIncludes('/api/v1/tasks/{id}/position', 'put', ['200', '400', '401', '403', '404', '409', '422', '429']);
    expectIncludes('/api/v1/tasks/changes', 'get', ['200', '400', '401', '403', '410', '429']);
    expectIncludes('/api/v1/recurrence/preview', 'get', ['200', '400', '401', '403', '429']);
    expect(paths['/api/v1/tasks/changes'].get.operationId).toBe('listTaskChanges');
    expect(paths['/api/v1/recurrence/preview'].get.operationId).toBe('previewRecurrence');
  });

  it('documents the decisions the spec leaves open', async () => {
    const { info } = (await t.http().get('/openapi.json').expect(200)).body;
    for (const topic of [
      'RATE_LIMIT_PER_MINUTE (default 600)',
      'subtasks per task',
      'Idempotency-Key',
      'Views:',
      'Search',
      'Position:',
      'Complete:',
      'Soft delete',
    ]) {
      expect(info.description).toContain(topic);
    }
  });
});

describe('documented platform routes', () => {
  it('answers /healthz, /readyz, /metrics and /openapi.json on its own port, which the document (whose server is the gateway) leaves out', async () => {
    const { paths, info } = (await t.raw().get('/openapi.json').expect(200)).body;
    for (const path of ['/healthz', '/readyz', '/metrics', '/openapi.json']) {
      await t.raw().get(path).expect(200);
      expect(paths[path]).toBeUndefined();
      expect(info.description).toContain(`GET ${path}`);
    }
  });

  it('answers the session-only keys routes as documented', async () => {
    const c = await t.caller();
    const { cookie } = await t.admin('create-session', '--account', c.accountId);
    const created = await t
      .http()
      .post('/api/v1/keys')
      .set('Cookie', cookie)
      .send({ name: 'cli', scopes: ['tasks:read'] })
      .expect(201);
    await t.http().get('/api/v1/keys').set('Cookie', cookie).expect(200);
    await t.http().post('/api/v1/keys').set('Cookie', cookie).send({ scopes: [] }).expect(400);
    await t.http().delete(`/api/v1/keys/${created.body.id}`).set('Cookie', cookie).expect(200);
    await t.http().delete('/api/v1/keys/00000000-0000-4000-8000-000000000000').set('Cookie', cookie).expect(404);
    await t.http().get('/api/v1/keys').set('Authorization', c.auth).expect(403);
    await t.http().get('/api/v1/keys').expect(401);
  });
});

// The served document, byte for byte, is the one captured in test/fixtures/openapi.json: the document
// is assembled from one file per resource (src/openapi/), and moving a piece between them must not
// change it. After a deliberate change to the document, regenerate the fixture from the build:
//   node scripts/cli.mjs build && (cd apps/tasks && node -e "require('node:fs').writeFileSync('test/fixtures/openapi.json', JSON.stringify(require('./dist/openapi.js').openapiDocument))")
describe('the served document', () => {
  it('is test/fixtures/openapi.json byte for byte', async () => {
    const served = (await t.http().get('/openapi.json').expect(200)).text;
    expect(served === readFileSync(join(__dirname, 'fixtures', 'openapi.json'), 'utf8')).toBe(true);
  });
});
