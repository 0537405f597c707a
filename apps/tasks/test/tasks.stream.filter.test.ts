import type { AddressInfo } from 'node:net';
import { openEventStream, type OpenedStream } from '@app/devstack';
import { createTask } from './helpers/factories.js';
import { startTestApp, type Caller, type TestApp } from './helpers/harness.js';

const ENV = { RATE_LIMIT_PER_MINUTE: '100000', STREAM_KEEPALIVE_MS: '300' };

let t: TestApp;
const opened: OpenedStream[] = [];

beforeAll(async () => {
  t = await startTestApp(ENV, { webhooks: true });
});
afterEach(() => {
  for (const s of opened.splice(0)) s.close();
});
afterAll(() => t.close());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const path = (filter: string) => `/api/v1/tasks/changes/stream?filter=${encodeURIComponent(filter)}`;

/** An open filtered stream of `c`'s tasks (past its `: stream open`). */
async function stream(c: Caller, filter: string, headers: Record<string, string> = {}): Promise<OpenedStream> {
  const origin = `http://127.0.0.1:${(t.server.address() as AddressInfo).port}`;
  const s = await openEventStream(`${origin}${path(filter)}`, { Authorization: c.auth, ...headers });
  opened.push(s);
  expect(s.status).toBe(200);
  await s.until((x) => x.blocks.some((b) => b.comment === 'stream open'));
  return s;
}
/** The stream's changes so far: `upsert <title>` or `delete <id>`, with their ids. */
const changes = (s: OpenedStream) =>
  s.blocks
    .filter((b) => b.event === 'change')
    .map((b) => {
      const change = JSON.parse(b.data!);
      return { id: b.id!, what: change.type === 'delete' ? `delete ${change.id}` : `upsert ${change.item.title}` };
    });
const whats = (s: OpenedStream) => changes(s).map((c) => c.what);

describe('GET /api/v1/tasks/changes/stream?filter=', () => {
  it('answers 400 validation_failed at /filter with the position for unreadable text, before the stream opens', async () => {
    const c = await t.caller();
    const res = await t.http().get(path('#work &')).set('Authorization', c.auth).expect(400);
    expect(res.body.error.code).toBe('validation_failed');
    expect(res.body.error.details).toEqual([
      { path: '/filter', message: expect.stringMatching(/^at position 8: expected a term/) },
    ]);
    const empty = await t.http().get('/api/v1/tasks/changes/stream?filter=').set('Authorization', c.auth).expect(400);
    expect(empty.body.error.details[0].path).toBe('/filter');
  });

  it('sends only the changes whose task matches, backlog and live, and every delete; Last-Event-ID resumes after the last one sent', async () => {
    const c = await t.caller();
    const edit = (id: string, body: Record<string, unknown>) =>
      t.http().patch(`/api/v1/tasks/${id}`).set('Authorization', c.auth).send(body).expect(200);
    const a = await createTask(t, c, { title: 'a', tags: ['work'] });
    const b = await createTask(t, c, { title: 'b', tags: ['home'] });
    const s = await stream(c, '#work');
    await s.until((x) => changes(x).length >= 1);
    await createTask(t, c, { title: 'c', tags: ['work'] });
    await createTask(t, c, { title: 'd', tags: ['home'] });
    await edit(b.id, { title: 'b2', tags: ['work'] });
    await t.http().delete(`/api/v1/tasks/${a.id}`).set('Authorization', c.auth).expect(200);
    await s.until((x) => changes(x).length >= 4);
    await sleep(300);
    expect(whats(s)).toEqual(['upsert a', 'upsert c', 'upsert b2', `delete ${a.id}`]);

    // After c: the changes since it, judged again (d still left out).
    const after = changes(s)[1]!.id;
    const resumed = await stream(c, '#work', { 'Last-Event-ID': after });
    await resumed.until((x) => changes(x).length >= 2);
    await sleep(300);
    expect(whats(resumed)).toEqual(['upsert b2', `delete ${a.id}`]);
    // An unfiltered stream from the same point sends d too.
    const origin = `http://127.0.0.1:${(t.server.address() as AddressInfo).port}`;
    const all = await openEventStream(`${origin}/api/v1/tasks/changes/stream`, {
      Authorization: c.auth,
      'Last-Event-ID': after,
    });
    opened.push(all);
    await all.until((x) => changes(x).length >= 3);
    expect(whats(all)).toEqual(['upsert d', 'upsert b2', `delete ${a.id}`]);
  });

  it("judges dates in the caller's zone, and task.due by its task", async () => {
    const c = await t.caller();
    const s = await stream(c, 'priority: high & due before: 2030-01-01 | #soon', {
      'X-Timezone': 'Pacific/Kiritimati',
    });
    // 2029-12-31T12:00Z is already 2030-01-01 in Kiritimati (UTC+14).
    await createTask(t, c, { title: 'early', priority: 'high', dueAt: '2029-12-31T09:59:59Z' });
    await createTask(t, c, { title: 'late', priority: 'high', dueAt: '2029-12-31T12:00:00Z' });
    const dueAt = new Date(Date.now() + 1500).toISOString();
    await createTask(t, c, { title: 'due, matching', tags: ['soon'], dueAt });
    await createTask(t, c, { title: 'due, not matching', dueAt });
    await s.until((x) => x.blocks.some((b) => b.event === 'task.due'), 8000);
    await sleep(1500);
    expect(whats(s)).toEqual(['upsert early', 'upsert due, matching']);
    expect(s.blocks.filter((b) => b.event === 'task.due').map((b) => JSON.parse(b.data!).title)).toEqual([
      'due, matching',
    ]);
  });
});
