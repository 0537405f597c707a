import { createTask } from './helpers/factories.js';
import { startTestApp, type Caller, type TestApp } from './helpers/harness.js';

/*
 * The MCP add_tasks and update_tasks tools send their calls as one POST /api/v1/tasks/batch
 * (DESIGN.md, "Batched commands": the MCP tools use it), and still answer per task.
 */
let t: TestApp;
const lines: string[] = [];
beforeAll(async () => {
  t = await startTestApp({ RATE_LIMIT_PER_MINUTE: '20', LOG_LEVEL: 'info' }, { logSink: (line) => lines.push(line) });
});
afterAll(() => t.close());

const call = (c: Caller, name: string, args: object) =>
  t
    .raw()
    .post('/mcp/tasks')
    .set('Authorization', c.auth)
    .set('Accept', 'application/json, text/event-stream')
    .send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } })
    .expect(200);

/** The requests the request log shows since line `from`: "METHOD route" each. */
function requestsSince(from: number): string[] {
  return lines
    .slice(from)
    .map((line) => JSON.parse(line) as { msg?: string; method?: string; route?: string })
    .filter((l) => l.msg === 'request')
    .map((l) => `${l.method} ${l.route}`);
}

async function feedSince(c: Caller, cursor: string) {
  const res = await t.http().get('/api/v1/tasks/changes').query({ cursor }).set('Authorization', c.auth).expect(200);
  return res.body.changes as Array<{ type: string; id: string }>;
}

describe('MCP add_tasks and update_tasks send one batch request', () => {
  it('adds N tasks with one POST /api/v1/tasks/batch: N against the rate limit, N events, a result per task', async () => {
    const c = await t.caller();
    const before = (await t.http().get('/api/v1/tasks/changes').set('Authorization', c.auth).expect(200)).body;
    const from = lines.length;
    const res = await call(c, 'add_tasks', {
      tasks: [{ title: 'Book the train' }, { title: 42 }, { title: 'Pack the bags', tags: ['trip'] }],
    });
    const requests = requestsSince(from);
    expect(requests.filter((r) => r.startsWith('POST /api/v1/tasks'))).toEqual(['POST /api/v1/tasks/batch']);
    const answer = res.body.result.structuredContent;
    expect(answer.status).toBe(207);
    expect(answer.result).toEqual([
      { action: 'add', status: 201, result: { item: expect.objectContaining({ title: 'Book the train' }) } },
      {
        action: 'add',
        status: 400,
        result: {
          error: expect.objectContaining({
            code: 'validation_failed',
            details: [expect.objectContaining({ path: '/title' })],
          }),
        },
      },
      {
        action: 'add',
        status: 201,
        result: { item: expect.objectContaining({ title: 'Pack the bags', tags: ['trip'] }) },
      },
    ]);
    const ids = [answer.result[0].result.item.id, answer.result[2].result.item.id];
    expect((await feedSince(c, before.nextCursor)).map((ch) => ch.id).sort()).toEqual([...ids].sort());
    // Two feed reads, this list, and 3 for the batch's commands (the MCP request counted as its REST request).
    const after = await t.http().get('/api/v1/tasks').set('Authorization', c.auth).expect(200);
    expect(after.headers['ratelimit-remaining']).toBe(String(20 - 2 - 1 - 3));
  });

  it('runs update_tasks in order: the batchable calls together, auto_tag on its own, each with its result', async () => {
    const c = await t.caller();
    const [a, b, d] = [
      await createTask(t, c, { title: 'a' }),
      await createTask(t, c, { title: 'b' }),
      await createTask(t, c, { title: 'd' }),
    ];
    const from = lines.length;
    const res = await call(c, 'update_tasks', {
      tasks: [
        { id: a.id, action: 'complete' },
        { id: b.id, action: 'edit', title: 'b2', ifMatch: '"1999-01-01T00:00:00.000Z"' },
        { id: d.id, action: 'auto_tag' },
        { id: d.id, action: 'delete' },
        { id: '00000000-0000-4000-8000-000000000000', action: 'reopen' },
      ],
      confirm: true,
    });
    expect(requestsSince(from).filter((r) => r.includes('/api/v1/tasks'))).toEqual([
      'POST /api/v1/tasks/batch',
      'POST /api/v1/tasks/:id/auto-tag',
      'POST /api/v1/tasks/batch',
    ]);
    const answer = res.body.result.structuredContent;
    expect(answer.result.map((r: { action: string; status: number }) => [r.action, r.status])).toEqual([
      ['complete', 200],
      ['edit', 412],
      ['auto_tag', 200],
      ['delete', 200],
      ['reopen', 404],
    ]);
    expect(answer.result[0].result.item).toMatchObject({ id: a.id, completedAt: expect.any(String) });
    expect(answer.result[1].result.error).toMatchObject({ code: 'precondition_failed' });
    expect(answer.result[4].result.error).toMatchObject({ code: 'not_found' });
    expect((await t.http().get(`/api/v1/tasks/${b.id}`).set('Authorization', c.auth).expect(200)).body.item.title).toBe(
      'b',
    );
    await t.http().get(`/api/v1/tasks/${d.id}`).set('Authorization', c.auth).expect(404);
  });

  it('applies a call with an idempotencyKey once: the same key again answers the first task', async () => {
    const c = await t.caller();
    const args = { tasks: [{ title: 'Once', idempotencyKey: 'mcp-once-1' }] };
    const first = (await call(c, 'add_tasks', args)).body.result.structuredContent.result[0];
    const again = (await call(c, 'add_tasks', args)).body.result.structuredContent.result[0];
    expect(first.status).toBe(201);
    expect(again.result.item.id).toBe(first.result.item.id);
    const list = await t.http().get('/api/v1/tasks').set('Authorization', c.auth).expect(200);
    expect(list.body.items.map((i: { title: string }) => i.title)).toEqual(['Once']);
  });
});
