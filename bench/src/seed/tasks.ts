import pg from 'pg';
import { Progress } from '../progress.js';
import { COMMON_WORD, RARE_WORD } from '../words.js';
import { poolWords, seedWordPool } from './word-pool.js';
import { stepTimer, type Timed } from './timed.js';

const WORKSPACES = 20;

/**
 * Accounts and their personal workspaces, as the admin command makes them. Returns the
 * workspace ids in order; the bench drives workspace 0.
 */
export async function seedTaskAccounts(
  client: pg.ClientBase,
): Promise<Array<{ accountId: string; workspaceId: string }>> {
  const { rows } = await client.query<{ accountId: string; workspaceId: string }>(
    `
    with a as (
      insert into tasks.accounts (email, timezone)
      select 'bench-tasks-' || n || '@example.test', 'Europe/Berlin' from generate_series(0, $1 - 1) n
      returning id, email
    )
    insert into tasks.workspaces (owner_account_id, name)
    select id, 'Personal' from a order by email
    returning owner_account_id as "accountId", id as "workspaceId"`,
    [WORKSPACES],
  );
  const order = new Map<string, number>();
  const { rows: accounts } = await client.query<{ id: string; email: string }>(
    `select id, email from tasks.accounts where email like 'bench-tasks-%'`,
  );
  for (const a of accounts) order.set(a.id, Number(a.email.replace(/\D/g, '')));
  return rows.sort((x, y) => order.get(x.accountId)! - order.get(y.accountId)!);
}

/**
 * Tasks `from..to` (a global sequence number) spread round-robin over the workspaces, in
 * batches through one INSERT ... SELECT each: every tenth task is top-level
 * with three subtasks after it, titles and notes are drawn Zipf-like from a 5,000-word vocabulary
 * (the word pool), `RARE_WORD` is in 0.5% of tasks and `COMMON_WORD` in half, with tags,
 * priorities and a mix of overdue, today, upcoming, undated and completed tasks. Each of those mixes is of a workspace's own tasks (its
 * `local` number): keyed on the global number, whose remainder by 20 is the workspace's, every
 * task of a workspace had the same due date kind, priority, tags and notes (workspace 0's all
 * undated, with no notes and no rare word).
 *
 * The rows' triggers stay off for the load (as for a restore): nobody watches a stream yet, and
 * the task_due job each open task due later would have had from its insert trigger is queued
 * once the rows are in, by one set-based statement (`queueDueJobs`). A seed of `REBUILD_FROM`
 * tasks or more with `databaseUrl` goes in on `LANES` connections at once (see `seedMany`);
 * a smaller one in one transaction on `client`.
 */
export async function seedTasks(
  client: pg.ClientBase,
  workspaces: string[],
  from: number,
  to: number,
  label: string,
  databaseUrl?: string,
): Promise<void> {
  const progress = new Progress(label, to - from);
  const jobs = await dueJobs(client);
  const step = await stepTimer(client);
  await step('word pool', () => seedWordPool(client));
  if (databaseUrl && to - from >= REBUILD_FROM) {
    await seedMany(client, databaseUrl, { workspaces, from, to, jobs }, progress, step);
  } else {
    await client.query('begin');
    try {
      await client.query('set local session_replication_role = replica');
      for (let start = from; start < to; start += BATCH) {
        const end = Math.min(to, start + BATCH);
        await client.query(INSERT_TASKS, [start, end, workspaces]);
        progress.tick(end - start);
      }
      if (jobs) await queueDueJobs(client, from, to);
      await client.query(SET_POSITION);
      await client.query('commit');
    } catch (err) {
      await client.query('rollback');
      throw err;
    }
  }
  progress.finish();
}

/** Tasks an INSERT ... SELECT writes. */
const BATCH = 50_000;
/** Seeds of at least this many tasks drop the secondary indexes first and build them once after. */
const REBUILD_FROM = 50_000;
/** Connections a big seed writes and builds indexes on at once: one per core of the 2-core machine the bench is sized for. */
const LANES = 2;
/** New tasks append from the app's position sequence: keep it above the seeded positions. */
const SET_POSITION = `select setval('tasks.tasks_position_seq', (select coalesce(max(floor(position)), 0) from tasks.tasks)::bigint + 1)`;

/**
 * A big seed on `LANES` connections of its own: INSERT ... SELECT cannot run in parallel in
 * Postgres, and two thirds of a row's cost is drawing its words and computing its `search`
 * tsvector (0.12 and 0.08 ms of CPU a row), so one statement keeps one core busy. The secondary
 * indexes are dropped first and built once after (one sort each instead of an insert into each
 * per row), the GIN search index (the slowest: GIN builds are not parallel before Postgres 18) on
 * one lane while the others go on the rest, then the due jobs are queued. Each batch commits on
 * its own: the database is the bench's throwaway one, and a failed seed fails the run.
 */
async function seedMany(
  client: pg.ClientBase,
  databaseUrl: string,
  seed: { workspaces: string[]; from: number; to: number; jobs: boolean },
  progress: Progress,
  step: Timed,
): Promise<void> {
  const rebuild = await dropSecondaryIndexes(client);
  const lanes = await Promise.all(
    Array.from({ length: LANES }, async () => {
      const lane = new pg.Client({ connectionString: databaseUrl });
      await lane.connect();
      await lane.query('set session_replication_role = replica; set synchronous_commit = off');
      return lane;
    }),
  );
  try {
    const batches: number[] = [];
    for (let start = seed.from; start < seed.to; start += BATCH) batches.push(start);
    await step(`insert ${seed.from}..${seed.to} on ${LANES} connections`, () =>
      onLanes(lanes, batches, async (lane, start) => {
        const end = Math.min(seed.to, start + BATCH);
        await lane.query(INSERT_TASKS, [start, end, seed.workspaces]);
        progress.tick(end - start);
      }),
    );
    // Slowest first, so the other lane builds the rest meanwhile.
    const definitions = [...rebuild].sort((a, b) => Number(/using gin/i.test(b)) - Number(/using gin/i.test(a)));
    await step(`${definitions.length} indexes on ${LANES} connections`, () =>
      onLanes(lanes, definitions, (lane, definition) => lane.query(definition)),
    );
  } finally {
    await Promise.all(lanes.map((lane) => lane.end()));
  }
  if (seed.jobs) {
    const queued = await step('task_due jobs', () => queueDueJobs(client, seed.from, seed.to));
    process.stderr.write(`  ${queued.toLocaleString('en-US')} task_due jobs queued\n`);
  }
  await client.query(SET_POSITION);
}

/** Runs `work` over `items` on the lanes, each lane taking the next item as it is free. */
async function onLanes<T>(lanes: pg.Client[], items: T[], work: (lane: pg.Client, item: T) => Promise<unknown>) {
  let next = 0;
  await Promise.all(
    lanes.map(async (lane) => {
      while (next < items.length) await work(lane, items[next++]!);
    }),
  );
}

/**
 * Queues the task_due job of each open task of `from..to` due later (the insert trigger's job: a
 * task due before now would have fired already, so it has none) through graphile-worker's batch
 * call `add_jobs`, 100,000 specs a call, in one statement.
 */
async function queueDueJobs(client: pg.ClientBase, from: number, to: number): Promise<number> {
  const { rows } = await client.query<{ queued: number }>(
    `select count(*)::int as queued from (
       select tasks_worker.add_jobs(array_agg(row('task_due', json_build_object('t', t.id), null, t.due_at, null, 'due:' || t.id, null, null)::tasks_worker.job_spec))
       from generate_series($1::int, $2::int - 1) g
       join tasks.tasks t on t.id = md5('task:' || g)::uuid
       where t.due_at > now() and t.completed_at is null
       group by g / 100000
     ) queued`,
    [from, to],
  );
  return rows[0]!.queued;
}

/**
 * Whether the task_due jobs' queue (`tasks_worker.add_jobs`, graphile-worker's batch call) is
 * there, waiting up to a minute for the worker process to make it as it starts: the jobs the
 * insert trigger would queue are queued by the seed's statement.
 */
async function dueJobs(client: pg.ClientBase): Promise<boolean> {
  for (let i = 0; i < 60; i++) {
    const { rows } = await client.query<{ made: boolean }>(
      `select exists (select from pg_proc p join pg_namespace n on n.oid = p.pronamespace
         where n.nspname = 'tasks_worker' and p.proname = 'add_jobs') as made`,
    );
    if (rows[0]?.made) return true;
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  process.stderr.write('tasks_worker.add_jobs is not there: the seeded tasks have no task_due jobs\n');
  return false;
}

/**
 * Drops the tasks table's indexes other than the unique ones (the primary key, the manual order);
 * their definitions, to build each again once the rows are in (one sort each instead of an
 * insert into each per row; the two GIN indexes most of all).
 */
async function dropSecondaryIndexes(client: pg.ClientBase): Promise<string[]> {
  const { rows } = await client.query<{ name: string; definition: string }>(
    `select c.relname as name, pg_get_indexdef(i.indexrelid) as definition
     from pg_index i join pg_class c on c.oid = i.indexrelid
     where i.indrelid = 'tasks.tasks'::regclass and not i.indisunique`,
  );
  for (const { name } of rows) await client.query(`drop index tasks.${name}`);
  return rows.map((r) => r.definition);
}

/** The numbers of a batch, each with its workspace and its number within it. */
const ROWS = `
      with params as (select $3::uuid[] as ws, cardinality($3::uuid[]) as wn),
      rows as (
        select g,
          (g / (select wn from params)) as local,
          (select ws from params)[1 + g % (select wn from params)] as workspace_id
        from generate_series($1::int, $2::int - 1) g
      )`;

/** The tasks of those numbers. */
const INSERT = `
      insert into tasks.tasks (id, workspace_id, parent_id, title, notes, priority, due_at, completed_at, tags, position, created_at, updated_at)
      select
        md5('task:' || r.g)::uuid,
        r.workspace_id,
        case when r.local % 10 in (7, 8, 9) then md5('task:' || (r.g - (r.local % 10) * (select wn from params)))::uuid end,
        initcap(${poolWords(3, '3 + r.g % 5')})
          || case when r.local % 200 = 3 then ' ${RARE_WORD}' else '' end,
        case when r.local % 10 < 3 then null else
          ${poolWords(2, '12 + r.g % 48')}
          || case when r.local % 2 = 0 then ' ${COMMON_WORD}' else '' end
        end,
        (array['high', 'medium', 'low', null])[1 + r.local % 4],
        case r.local % 10
          when 0 then null when 1 then null when 2 then null when 3 then null
          when 4 then now() - (r.g % 30 + 1) * interval '1 day'
          when 5 then date_trunc('day', now()) + interval '17 hours'
          else now() + (r.g % 60 + 1) * interval '1 day'
        end,
        case when r.local % 9 = 0 then now() - interval '1 hour' end,
        case r.local % 4 when 0 then '{}'::text[] when 1 then array['work'] when 2 then array['home', 'errand']
          else array['tag' || (r.g % 40)] end,
        case when r.local % 10 in (7, 8, 9) then null else r.local::numeric end,
        now() - (1000000 - r.g) * interval '1 second',
        now() - (1000000 - r.g) * interval '1 second'
      from rows r`;

/** One batch's INSERT ... SELECT ($1..$2 the numbers, $3 the workspaces). */
const INSERT_TASKS = `${ROWS}\n${INSERT}`;
