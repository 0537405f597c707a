import { readFileSync } from 'node:fs';
import { join } from 'node:path';
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
      '/api/clipboard',
      '/api/clipboard/bulk',
      '/api/clipboard/pull',
      '/api/clipboard/pull/stream',
      '/api/clipboard/sync',
      '/api/clipboard/webhooks',
      '/api/clipboard/webhooks/{id}',
      '/api/clipboard/webhooks/{id}/deliveries',
      '/api/clipboard/webhooks/{id}/replay',
      '/api/clipboard/webhooks/{id}/rotate-secret',
      '/api/clipboard/webhooks/{id}/test',
      '/api/clipboard/{id}',
      '/api/clipboard/{id}/favorite',
      '/api/settings',
      '/api/settings/keys',
      '/api/settings/keys/{id}',
      '/api/snippets',
      '/api/snippets/{id}',
      '/auth/clipboard/apps',
      '/auth/clipboard/apps/{id}',
      '/auth/clipboard/login',
      '/auth/clipboard/logout',
      '/auth/clipboard/me',
      '/auth/clipboard/signup',
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

// The served document, byte for byte, is the one captured in test/fixtures/openapi.json: the document
// is assembled from one file per resource (src/openapi/), and moving a piece between them must not
// change it. After a deliberate change to the document, regenerate the fixture from the build:
//   node scripts/cli.mjs build && (cd apps/clipboard && node -e "require('node:fs').writeFileSync('test/fixtures/openapi.json', JSON.stringify(require('./dist/openapi.js').openapiDocument))")
describe('the served document', () => {
  it('is test/fixtures/openapi.json byte for byte', async () => {
    const served = (await t.http().get('/openapi.json').expect(200)).text;
    expect(served === readFileSync(join(__dirname, 'fixtures', 'openapi.json'), 'utf8')).toBe(true);
  });
});
