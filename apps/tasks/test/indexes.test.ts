import { Kysely, PostgresDialect, sql, type CompiledQuery } from 'kysely';
import { createPool } from '@app/auth/runtime';
import type { Database } from '../src/db/schema.js';
import * as repo from '../src/db/tasks.repository.js';
import { filteredPage } from '../src/db/filter.repository.js';
import { mentionsCompleted, parseFilter, resolveFilter } from '../src/domain/filter.js';
import { startTestApp, type Caller, type TestApp } from './helpers/harness.js';

let t: TestApp;
let c: Caller;
let logged: Kysely<Database>;
let captured: CompiledQuery[] = [];
beforeAll(async () => {
  t = await startTestApp();
  c = await t.caller();
  // Enough rows, spread over two workspaces, for the planner's statistics to mean something.
  const other = await t.caller();
  const words = ['invoice', 'call', 'email', 'review', 'plan', 'garden', 'shop', 'write', 'read', 'fix'];
  for (const ws of [c.workspaceId, other.workspaceId]) {
    await t.db
      .insertInto('tasks')
      .values(
        Array.from({ length: 3000 }, (_, i) => ({
          workspace_id: ws,
          title: `${words[i % 10]} ${words[(i * 7) % 10]} number ${i}`,
          notes: i % 3 ? `notes about ${words[(i * 3) % 10]}` : null,
          tags: i % 5 ? ['home'] : ['work'],
          due_at: i % 2 ? `2031-01-${String((i % 28) + 1).padStart(2, '0')}T10:00:00Z` : null,
          completed_at: i % 4 === 0 ? '2030-01-01T00:00:00Z' : null,
          position: String(i + 1),
        })),
      )
      .execute();
    // Subtasks too, three under each of 200 tasks: a partial index of subtasks is not an empty one.
    const parents = await t.db.selectFrom('tasks').select('id').where('workspace_id', '=', ws).limit(200).execute();
    await t.db
      .insertInto('tasks')
      .values(
        parents.flatMap(({ id }) =>
          [1, 2, 3].map((n) => ({ workspace_id: ws, parent_id: id, title: `step ${n}`, position: null })),
        ),
      )
      .execute();
  }
  await sql`vacuum analyze tasks`.execute(t.db);
  logged = new Kysely<Database>({
    dialect: new PostgresDialect({ pool: createPool(t.databaseUrl, 'tasks', 2) }),
    log: (event) => {
      if (event.level === 'query') captured.push(event.query);
    },
  });
});
afterAll(async () => {
  await logged.destroy();
  await t.close();
});

/** The plan of the one query `run` sends, with sequential scans priced out: proves an index fits it. */
async function planOf(run: (db: Kysely<Database>) => Promise<unknown>): Promise<string> {
  captured = [];
  await run(logged);
  const query = captured[captured.length - 1]!;
  return t.db.transaction().execute(async (trx) => {
    await sql`set local enable_seqscan = off`.execute(trx);
    const { rows } = await trx.executeQuery<{ 'QUERY PLAN': string }>({ ...query, sql: `explain ${query.sql}` });
    return rows.map((r) => r['QUERY PLAN']).join('\n');
  });
}

const after = '2030-01-01T00:00:00Z';
const ID = '00000000-0000-4000-8000-000000000000';

describe('hot queries have an index (the benchmark replays them at 1M rows)', () => {
  it.each([
    [
      'view=all page',
      (db: Kysely<Database>) =>
        repo.listOrderedPage(db, { workspaceId: c.workspaceId, tag: null, afterPosition: '5', limit: 51 }),
      /tasks_order_key/,
    ],
    [
      'view=all page with a tag',
      (db: Kysely<Database>) =>
        repo.listOrderedPage(db, { workspaceId: c.workspaceId, tag: 'work', afterPosition: null, limit: 51 }),
      /tasks_(order_key|tags_idx)/,
    ],
    [
      'view=today page',
      (db: Kysely<Database>) =>
        repo.listCreatedPage(db, {
          workspaceId: c.workspaceId,
          filter: { dueBefore: after },
          tag: null,
          after: { createdAt: after, id: ID },
          limit: 51,
        }),
      /tasks_open_due_idx/,
    ],
    [
      'view=upcoming page',
      (db: Kysely<Database>) =>
        repo.listCreatedPage(db, {
          workspaceId: c.workspaceId,
          filter: { dueFrom: after },
          tag: null,
          after: null,
          limit: 51,
        }),
      /tasks_open_due_idx/,
    ],
    [
      'view=completed page',
      (db: Kysely<Database>) =>
        repo.listCreatedPage(db, {
          workspaceId: c.workspaceId,
          filter: { completed: true },
          tag: null,
          after: null,
          limit: 51,
        }),
      /tasks_completed_idx/,
    ],
    [
      'search page for a rare word',
      (db: Kysely<Database>) =>
        repo.searchPage(db, {
          workspaceId: c.workspaceId,
          q: 'zebra',
          after: { rank: 0.0607927, id: ID },
          limit: 51,
          candidates: 1000,
        }),
      /tasks_search_idx/,
    ],
    ['subtasks of one task', (db: Kysely<Database>) => repo.listSubtasks(db, ID), /tasks_parent_idx/],
    [
      'start of the manual order (move to top)',
      (db: Kysely<Database>) => repo.firstPosition(db, c.workspaceId, c.workspaceId),
      /tasks_order_key/,
    ],
    [
      'changes feed page',
      (db: Kysely<Database>) =>
        repo.changesPage(db, { workspaceId: c.workspaceId, after: { xid: '1', id: ID }, keepFrom: '1', limit: 101 }),
      /tasks_changes_idx/,
    ],
    [
      'changes feed, first sync',
      (db: Kysely<Database>) =>
        repo.changesPage(db, { workspaceId: c.workspaceId, after: { xid: '0', id: ID }, keepFrom: null, limit: 101 }),
      /tasks_changes_idx/,
    ],
    [
      'tombstone pruning',
      (db: Kysely<Database>) => repo.pruneTombstones(db, c.workspaceId, 31, 100),
      /tasks_tombstones_idx/,
    ],
  ])('%s', async (_name, run, index) => {
    const plan = await planOf(run);
    expect(plan).toMatch(index);
    expect(plan).not.toMatch(/Seq Scan on tasks/);
  });
});

describe('each filter term has an index (GET /api/v1/tasks?filter=)', () => {
  /** The page a filter expression reads, as the route sends it (UTC, now). */
  const page = (text: string) => (db: Kysely<Database>) => {
    const parsed = parseFilter(text);
    return filteredPage(db, {
      workspaceId: c.workspaceId,
      filter: resolveFilter(parsed, 'UTC', Date.now()),
      withCompleted: mentionsCompleted(parsed),
      after: null,
      limit: 51,
    });
  };
  // An open task's due time has two indexes: the filters' (workspace_id, due_at) and the
  // reminder worker's partial one over open tasks (its catch-up reads every workspace); on this
  // small table the planner may take either for an upper bound on open tasks' due times.
  const due = /tasks_due_idx|tasks_open_due_at_idx/;
  it.each([
    ['today', due],
    ['tomorrow', due],
    ['overdue', due],
    ['next 7 days', due],
    ['due before: 2031-01-03', due],
    ['due after: 2031-01-27', /tasks_due_idx/],
    // Half this workspace has no date: the planner may read the workspace by its smallest index
    // (tasks_tags_idx's workspace key) rather than tasks_due_idx, which carries the page's columns.
    ['no date', /tasks_due_idx|tasks_tags_idx/],
    ['priority: high', /tasks_priority_idx/],
    ['#work', /tasks_tags_idx/],
    ['no tags', /tasks_untagged_idx/],
    ['search: zebra', /tasks_search_idx/],
    ['recurring', /tasks_recurring_idx/],
    ['subtask', /tasks_subtasks_idx/],
    ['completed', /tasks_completed_idx/],
    ['assigned to: ann', /tasks_assignee_idx/],
    ['#work & priority: high | recurring', /tasks_priority_idx[\s\S]*tasks_recurring_idx/],
  ])('%s', async (text, index) => {
    const plan = await planOf(page(text));
    expect(plan).toMatch(index);
    expect(plan).not.toMatch(/Seq Scan on tasks/);
  });
});
