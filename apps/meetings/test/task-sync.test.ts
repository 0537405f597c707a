import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import type { ServiceDeps } from '@app/auth/runtime';
import { sealValue } from '@app/auth/webhooks';
import { taskSyncJobs } from '../src/domain/task-sync.jobs.js';
import { addItem, createSeries, startApp } from './helpers/factories.js';
import type { TestApp } from './helpers/harness.js';

/*
 * The task_sync job (DESIGN "Actions into tasks") against a stand-in for tasks' public API: what
 * a run costs here, and what a failed run logs.
 */

let t: TestApp;
let tasks: Server;
let tasksUrl: string;
/** What the stand-in answers to GET /api/v1/tasks/changes. */
let feed: { status: number; body: unknown };

beforeAll(async () => {
  t = await startApp();
  tasks = createServer((req, res) => {
    const answer = req.url?.startsWith('/api/v1/tasks/changes') ? feed : { status: 404, body: {} };
    res.writeHead(answer.status, { 'Content-Type': 'application/json' }).end(JSON.stringify(answer.body));
  }).listen(0, '127.0.0.1');
  await once(tasks, 'listening');
  tasksUrl = `http://127.0.0.1:${(tasks.address() as AddressInfo).port}`;
});
afterAll(async () => {
  tasks.close();
  await t.close();
});

const ACCESS_TOKEN = 'oat_secret-access-token';

/** A logger keeping what the job warns, as `{ ...fields, msg }`. */
function warnings() {
  const lines: Array<Record<string, unknown>> = [];
  const log = { warn: (fields: object, msg: string) => lines.push({ ...fields, msg }) };
  return { lines, log: log as unknown as ServiceDeps['logger'] };
}

/** A connected account (tokens sealed as the callback stores them) with one action linked to `taskId`. */
async function linkedAccount(taskId: string) {
  const c = await t.caller();
  const keys = t.config.webhooks.secretKeys;
  const seal = (column: string, value: string) => sealValue(keys, `task_connections.${column}:${c.accountId}`, value);
  await t.db
    .insertInto('task_connections')
    .values({
      account_id: c.accountId,
      tasks_url: tasksUrl,
      client_id: `${tasksUrl}/client.json`,
      access_token: seal('access_token', ACCESS_TOKEN),
      refresh_token: seal('refresh_token', 'ort_secret-refresh-token'),
      access_expires_at: new Date(Date.now() + 3_600_000).toISOString(),
    })
    .execute();
  const { meetings } = await createSeries(t, c);
  const item = await addItem(t, c, meetings[0].id, { kind: 'ACTION', text: 'Private action text' });
  await t.db.updateTable('items').set({ linked_task_id: taskId }).where('id', '=', item.id).execute();
  return { accountId: c.accountId, itemId: item.id as string };
}

const upsert = (id: string, completedAt: string | null = null) => ({
  type: 'upsert',
  id,
  item: { id, completedAt },
});

it("a page of tasks' feed costs the same few queries however many unlinked tasks it holds; the linked one is applied", async () => {
  const taskId = randomUUID();
  const { accountId, itemId } = await linkedAccount(taskId);
  const done = '2030-01-08T10:00:00.000Z';
  const run = () => taskSyncJobs(t.db, t.config.webhooks.secretKeys, warnings().log).task_sync({ a: accountId });
  const page = (unlinked: number) => ({
    status: 200,
    body: {
      changes: [...Array.from({ length: unlinked }, () => upsert(randomUUID())), upsert(taskId, done)],
      nextCursor: `c${unlinked}`,
      hasMore: false,
    },
  });

  feed = page(2);
  await run();
  const item = await t.db.selectFrom('items').selectAll().where('id', '=', itemId).executeTakeFirstOrThrow();
  expect(new Date(item.completed_at!).toISOString()).toBe(done);

  // Applied already: the linked change changes nothing now, in both pages.
  const small = (await t.roundTrips.measure(run)).postgres;
  feed = page(60);
  const large = (await t.roundTrips.measure(run)).postgres;
  expect(large).toBe(small);
});

it('a failed run logs its class (and tasks status), never a token or an item text', async () => {
  const { accountId } = await linkedAccount(randomUUID());
  const { lines, log } = warnings();
  const run = () => taskSyncJobs(t.db, t.config.webhooks.secretKeys, log).task_sync({ a: accountId });

  feed = { status: 403, body: { error: { code: 'insufficient_scope' } } };
  await run();
  feed = { status: 503, body: {} };
  await run();

  expect(lines).toEqual([
    expect.objectContaining({ accountId, failure: 'SyncInterrupted', status: 403 }),
    expect.objectContaining({ accountId, failure: 'AppError', code: 'service_unavailable' }),
  ]);
  const text = JSON.stringify(lines);
  for (const secret of [ACCESS_TOKEN, 'ort_secret-refresh-token', 'Private action text'])
    expect(text).not.toContain(secret);
});
