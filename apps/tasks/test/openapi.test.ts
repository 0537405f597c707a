import { startTestApp, type TestApp } from './helpers/harness.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

describe('GET /openapi.json', () => {
  it('serves an OpenAPI 3.1 document listing every path the service answers', async () => {
    const res = await t.http().get('/openapi.json').expect(200);
    expect(res.body.openapi).toBe('3.1.0');
    expect(Object.keys(res.body.paths).sort()).toEqual([
      '/api/v1/keys', '/api/v1/keys/{id}', '/api/v1/tasks', '/api/v1/tasks/{id}', '/api/v1/tasks/{id}/auto-tag',
      '/api/v1/tasks/{id}/complete', '/api/v1/tasks/{id}/position', '/api/v1/tasks/{id}/reopen',
      '/healthz', '/metrics', '/openapi.json', '/readyz',
    ]);
  });

  it('lists for each task operation every status the spec names', async () => {
    const { paths } = (await t.http().get('/openapi.json').expect(200)).body;
    const statuses = (path: string, method: string) => Object.keys(paths[path][method].responses).sort();
    const expectIncludes = (path: string, method: string, list: string[]) => expect(statuses(path, method)).toEqual(expect.arrayContaining(list));
    expectIncludes('/api/v1/tasks', 'get', ['200', '400', '401', '403', '429']);
    expectIncludes('/api/v1/tasks', 'post', ['201', '400', '401', '403', '409', '422', '429']);
    expectIncludes('/api/v1/tasks/{id}', 'get', ['200', '401', '403', '404', '429']);
    expectIncludes('/api/v1/tasks/{id}', 'patch', ['200', '400', '401', '403', '404', '412', '422', '429']);
    expectIncludes('/api/v1/tasks/{id}', 'delete', ['200', '401', '403', '404', '412', '429']);
    expectIncludes('/api/v1/tasks/{id}/complete', 'post', ['200', '401', '403', '404', '409', '412', '429']);
    expectIncludes('/api/v1/tasks/{id}/reopen', 'post', ['200', '401', '403', '404', '409', '412', '429']);
    expectIncludes('/api/v1/tasks/{id}/auto-tag', 'post', ['200', '401', '403', '404', '429']);
    expectIncludes('/api/v1/tasks/{id}/position', 'put', ['200', '400', '401', '403', '404', '409', '422', '429']);
  });

  it('documents the decisions the spec leaves open', async () => {
    const { info } = (await t.http().get('/openapi.json').expect(200)).body;
    for (const topic of ['RATE_LIMIT_PER_MINUTE (default 600)', 'subtasks per task', 'Idempotency-Key', 'Views:', 'Search', 'Position:', 'Complete:', 'Soft delete']) {
      expect(info.description).toContain(topic);
    }
  });
});
