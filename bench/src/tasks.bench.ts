import { randomUUID } from 'node:crypto';
import { expressFloors } from './floor.js';
import { COMMON_WORD, RARE_WORD } from './words.js';
import { seedTaskAccounts, seedTasks } from './seed/tasks.js';
import type { Row } from './report.js';
import type { BenchContext, Scenario } from './types.js';
import { size } from './size.js';

const TASK_COLUMNS =
  'id, title, notes, priority, due_at, completed_at, tags, created_at, updated_at, parent_id, goal_id, recurrence, location, assignee_id';

export interface TasksFixture {
  workspaces: string[];
  auth: Record<string, string>;
  accountId: string;
  /** The key the admin command made (its scopes are copied to the bench's other keys). */
  keyId: string;
}

/** Accounts, the first 10,000 tasks and a key for workspace 0. */
export async function seedTasksSmall(ctx: BenchContext): Promise<TasksFixture> {
  const accounts = await seedTaskAccounts(ctx.client);
  const workspaces = accounts.map((a) => a.workspaceId);
  await seedTasks(ctx.client, workspaces, 0, 10_000, 'tasks (first 10k)');
  await ctx.client.query('analyze tasks.tasks');
  const key = await ctx.admin('tasks', 'create-key', '--account', accounts[0]!.accountId, '--name', 'bench');
  return { workspaces, auth: { authorization: `Bearer ${key.key}` }, accountId: accounts[0]!.accountId, keyId: key.id };
}

/** The full data set: 1,000,000 tasks (BENCH_TASKS overrides, for a quick trial run). */
export const TOTAL_TASKS = Number(process.env.BENCH_TASKS ?? size(1_000_000, 12_000));

/** The rest, up to TOTAL_TASKS. */
export async function seedTasksLarge(ctx: BenchContext, fixture: TasksFixture): Promise<void> {
  await seedTasks(
    ctx.client,
    fixture.workspaces,
    10_000,
    TOTAL_TASKS,
    `tasks (to ${TOTAL_TASKS.toLocaleString('en-US')})`,
    ctx.databaseUrl,
  );
  process.stderr.write('vacuum analyze tasks...\n');
  const t = Date.now();
  await ctx.client.query('vacuum analyze tasks.tasks');
  process.stderr.write(`  vacuum analyze tasks.tasks: ${((Date.now() - t) / 1000).toFixed(1)} s\n`);
}

/** The scale check's two queries: a first list page and a rare-word search. */
export function scaleRequests(f: TasksFixture) {
  return {
    list: { path: '/api/v1/tasks?view=all&limit=50', headers: f.auth },
    search: { path: `/api/v1/tasks?q=${RARE_WORD}&limit=50`, headers: f.auth },
  };
}

/** The filter row's expression: a realistic multi-term one, over the same workspace as the view rows. */
const FILTER_EXPRESSION = '(today | overdue) & priority: high & !#errand';
/** The rows whose p95s the bench compares (issue 58: the filter's within 2x of view=all's). */
const FILTER_ROW = `tasks list filter=${FILTER_EXPRESSION}`;
const VIEW_ALL_ROW = 'tasks list view=all (page 1)';

/**
 * The filter row's p95 beside view=all's (page 1) and their ratio (issue 58's target: <= 2), when
 * both rows ran; null otherwise.
 */
export function filterFigures(rows: Row[]): { filterP95Ms: number; viewAllP95Ms: number; ratio: number } | null {
  const filter = rows.find((r) => r.scenario === FILTER_ROW)?.product;
  const all = rows.find((r) => r.scenario === VIEW_ALL_ROW)?.product;
  if (!filter || !all) return null;
  return { filterP95Ms: filter.p95, viewAllP95Ms: all.p95, ratio: filter.p95 / Math.max(all.p95, 0.001) };
}

/** Changes waiting for the feed scenario's client. */
const PENDING_CHANGES = size(1_000, 120);

/**
 * A client of workspace 0 that has synced everything (a full sync through the feed, 500 a page),
 * then 1,000 of the workspace's tasks change, each in its own transaction as the service writes
 * them. Returns the client's cursor: each request of the scenario reads the first page (100) of
 * those changes.
 */
async function pendingChanges(ctx: BenchContext, f: TasksFixture): Promise<string> {
  let cursor = '';
  for (let page = 0; ; page++) {
    const res: { nextCursor: string; hasMore: boolean } = await ctx.getJson(
      `/api/v1/tasks/changes?limit=500${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      f.auth,
    );
    cursor = res.nextCursor;
    if (!res.hasMore) break;
    if (page > 100_000) throw new Error('the changes feed never ended');
  }
  const { rows } = await ctx.client.query<{ id: string }>(
    'select id from tasks.tasks where workspace_id = $1 and deleted_at is null order by id limit $2',
    [f.workspaces[0], PENDING_CHANGES],
  );
  for (const { id } of rows) {
    await ctx.client.query(
      `update tasks.tasks set notes = coalesce(notes, '') || ' (edited)', updated_at = greatest(clock_timestamp(), updated_at + interval '1 microsecond'), change_xid = pg_current_xact_id() where id = $1`,
      [id],
    );
  }
  return cursor;
}

/** The tasks scenarios of the issue, on the seeded data. */
export async function taskScenarios(ctx: BenchContext, f: TasksFixture): Promise<Scenario[]> {
  // First: it edits tasks, which would make the PATCH scenario's If-Match values stale.
  const feedCursor = await pendingChanges(ctx, f);
  // A deep page: follow nextCursor 200 pages down the manual order.
  let cursor: string | null = null;
  for (let i = 0; i < 200; i++) {
    const page: { nextCursor: string | null } = await ctx.getJson(
      `/api/v1/tasks?view=all&limit=50${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      f.auth,
    );
    if (!page.nextCursor) break;
    cursor = page.nextCursor;
  }
  // Tasks for PATCH: each request takes a task no other request in flight holds (autocannon
  // clears its per-connection context after every response), so If-Match races only with itself.
  const first = await ctx.getJson('/api/v1/tasks?view=all&limit=200', f.auth);
  const free: Array<{ id: string; updatedAt: string }> = first.items.map((t: any) => ({
    id: t.id,
    updatedAt: t.updatedAt,
  }));
  const targetIds = free.map((t) => t.id);
  const createBaseline: Scenario['baseline'] = {
    route: {
      schema: 'tasks',
      statements: [
        {
          sql: `insert into tasks (workspace_id, title, notes, priority, tags, position) values ($1, $2, $3, $4, $5, 1e12 + random() * 1e12) returning ${TASK_COLUMNS}`,
          params: [
            f.workspaces[0]!,
            'Prepare the quarterly review',
            'Collect numbers from finance and sales',
            'medium',
            '{work}',
          ],
        },
      ],
    },
    does: 'runs one bare INSERT of the task (no idempotency record, transaction or change feed)',
  };
  const patchBaseline: Scenario['baseline'] = {
    route: {
      schema: 'tasks',
      statements: [
        {
          sql: `update tasks set title = $1, updated_at = greatest(clock_timestamp(), updated_at + interval '1 microsecond'), change_xid = pg_current_xact_id() where id = $2 and workspace_id = $3 and deleted_at is null returning ${TASK_COLUMNS}`,
          params: ['Renamed', '', f.workspaces[0]!],
        },
      ],
      rotate: { 1: targetIds },
    },
    does: 'runs one bare UPDATE ... RETURNING of the task (no If-Match check, validation or transaction)',
  };

  return [
    {
      name: `tasks changes (${PENDING_CHANGES.toLocaleString('en-US')} pending)`,
      service: 'tasks',
      request: { path: `/api/v1/tasks/changes?cursor=${encodeURIComponent(feedCursor)}`, headers: f.auth },
      baseline: { replay: true },
    },
    {
      name: VIEW_ALL_ROW,
      service: 'tasks',
      request: { path: '/api/v1/tasks?view=all&limit=50', headers: f.auth },
      baseline: { replay: true },
    },
    {
      name: FILTER_ROW,
      service: 'tasks',
      request: {
        path: `/api/v1/tasks?filter=${encodeURIComponent(FILTER_EXPRESSION)}&limit=50`,
        headers: { ...f.auth, 'x-timezone': 'Europe/Berlin' },
      },
      baseline: { replay: true },
    },
    {
      name: 'tasks list view=all (page 200)',
      service: 'tasks',
      request: { path: `/api/v1/tasks?view=all&limit=50&cursor=${encodeURIComponent(cursor ?? '')}`, headers: f.auth },
      baseline: { replay: true },
    },
    {
      name: 'tasks list view=today',
      service: 'tasks',
      request: { path: '/api/v1/tasks?view=today&limit=50', headers: { ...f.auth, 'x-timezone': 'Europe/Berlin' } },
      baseline: { replay: true },
      moreBaselines: expressFloors({ replay: true }),
    },
    {
      name: `tasks search rare (${RARE_WORD})`,
      service: 'tasks',
      request: { path: `/api/v1/tasks?q=${RARE_WORD}&limit=50`, headers: f.auth },
      baseline: { replay: true },
    },
    {
      name: `tasks search common (${COMMON_WORD})`,
      service: 'tasks',
      request: { path: `/api/v1/tasks?q=${COMMON_WORD}&limit=50`, headers: f.auth },
      baseline: { replay: true },
    },
    {
      name: 'tasks create (Idempotency-Key)',
      service: 'tasks',
      request: {
        method: 'POST',
        path: '/api/v1/tasks',
        headers: f.auth,
        body: JSON.stringify({
          title: 'Prepare the quarterly review',
          notes: 'Collect numbers from finance and sales',
          priority: 'medium',
          tags: ['work'],
        }),
        setup: () => ({ headers: { 'idempotency-key': randomUUID() } }),
      },
      baseline: createBaseline,
      moreBaselines: expressFloors(createBaseline),
    },
    {
      name: 'tasks patch (If-Match)',
      service: 'tasks',
      request: {
        method: 'PATCH',
        path: '/api/v1/tasks/x',
        headers: f.auth,
        setup: (c) => {
          c.target = free.shift()!;
          return {
            path: `/api/v1/tasks/${c.target.id}`,
            headers: { 'if-match': `"${c.target.updatedAt}"` },
            body: JSON.stringify({ title: `Renamed ${Date.now()}` }),
          };
        },
        onResponse: (status, body, c) => {
          if (status === 200) c.target.updatedAt = JSON.parse(body).item.updatedAt;
          free.push(c.target);
        },
      },
      baseline: patchBaseline,
      moreBaselines: expressFloors(patchBaseline),
    },
  ];
}
