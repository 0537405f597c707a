import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { likePattern, snippet } from '../src/domain/search.service.js';
import { startApp } from './helpers/factories.js';
import type { TestApp } from './helpers/harness.js';

let t: TestApp;
beforeAll(async () => {
  t = await startApp();
  // One request through the Redis rate limiter lets its store finish loading its scripts before
  // close() quits Redis (otherwise the pending load rejects after the suite).
  await t
    .http()
    .get('/api/me')
    .set('Authorization', (await t.caller()).auth)
    .expect(200);
});
afterAll(() => t.close());

describe('GET /openapi.json', () => {
  it('documents every path and method of the spec, plus keys (not the service-port health and metrics)', async () => {
    const res = await t.http().get('/openapi.json').expect(200);
    const ops = Object.entries(res.body.paths as Record<string, object>).flatMap(([path, methods]) =>
      Object.keys(methods).map((m) => `${m.toUpperCase()} ${path}`),
    );
    expect(ops.sort()).toEqual(
      [
        'DELETE /api/items/{id}',
        'DELETE /api/me/calendar-feed',
        'DELETE /api/me/connections/tasks',
        'DELETE /api/me/keys/{id}',
        'DELETE /api/meetings/{id}',
        'DELETE /api/notes/{date}',
        'DELETE /api/people/{id}',
        'DELETE /api/series/{id}',
        'GET /api/actions',
        'GET /api/calendar/{token}.ics',
        'GET /api/changes',
        'GET /api/changes/stream',
        'GET /api/me',
        'GET /api/me/connections',
        'GET /api/me/connections/tasks/callback',
        'GET /api/me/connections/tasks/client.json',
        'GET /api/me/connections/tasks/start',
        'GET /api/me/keys',
        'GET /api/meetings',
        'GET /api/meetings/{id}',
        'GET /api/notes',
        'GET /api/people',
        'GET /api/search',
        'GET /api/series',
        'PATCH /api/items/{id}',
        'PATCH /api/meetings/{id}',
        'PATCH /api/people/{id}',
        'PATCH /api/series/{id}',
        'POST /api/items/reorder',
        'POST /api/items/{id}/carry',
        'POST /api/items/{id}/send-to-tasks',
        'POST /api/me/calendar-feed',
        'POST /api/me/keys',
        'POST /api/meetings',
        'POST /api/meetings/{id}/carry',
        'POST /api/meetings/{id}/items',
        'POST /api/people',
        'POST /api/series',
        'PUT /api/notes/{date}',
        'GET /api/webhooks',
        'POST /api/webhooks',
        'GET /api/webhooks/{id}',
        'PATCH /api/webhooks/{id}',
        'DELETE /api/webhooks/{id}',
        'POST /api/webhooks/{id}/replay',
        'POST /api/webhooks/{id}/rotate-secret',
        'POST /api/webhooks/{id}/test',
        'GET /api/webhooks/{id}/deliveries',
        'GET /auth/meetings/apps',
        'DELETE /auth/meetings/apps/{id}',
        'GET /auth/meetings/me',
        'PATCH /auth/meetings/me',
        'POST /auth/meetings/login',
        'POST /auth/meetings/logout',
        'POST /auth/meetings/signup',
      ].sort(),
    );
    expect(res.body.openapi).toBe('3.1.0');
  });
});

describe('search helpers', () => {
  it('escapes ILIKE wildcards so they match themselves', () => {
    expect(likePattern('50%_off\\')).toBe('%50\\%\\_off\\\\%');
  });

  it('never cuts an astral character in half at either end of a snippet', () => {
    const text = `${'x'.repeat(10)}😀${'y'.repeat(39)}match${'z'.repeat(39)}😀${'w'.repeat(10)}`;
    const s = snippet(text, 'match');
    expect(s.startsWith('…😀')).toBe(true);
    expect(s.endsWith('😀…')).toBe(true);
    expect(snippet('short match', 'match')).toBe('short match');
  });
});

// The served document, byte for byte, is the one captured in test/fixtures/openapi.json: the document
// is assembled from one file per resource (src/openapi/), and moving a piece between them must not
// change it. After a deliberate change to the document, regenerate the fixture from the build:
//   node scripts/cli.mjs build && (cd apps/meetings && node -e "require('node:fs').writeFileSync('test/fixtures/openapi.json', JSON.stringify(require('./dist/openapi.js').openapiDocument))")
describe('the served document', () => {
  it('is test/fixtures/openapi.json byte for byte', async () => {
    const served = (await t.http().get('/openapi.json').expect(200)).text;
    expect(served === readFileSync(join(__dirname, 'fixtures', 'openapi.json'), 'utf8')).toBe(true);
  });
});
