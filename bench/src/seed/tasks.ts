import type pg from 'pg';
import { Progress } from '../progress.js';
import { COMMON_WORD, RARE_WORD, VOCABULARY } from '../words.js';

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
 * batches through one INSERT ... SELECT each: every tenth task is top-level with three subtasks
 * after it, titles and notes are drawn Zipf-like from a 5,000-word vocabulary, `RARE_WORD` is in
 * 0.5% of tasks and `COMMON_WORD` in half, with tags, priorities and a mix of overdue, today,
 * upcoming, undated and completed tasks. Each of those mixes is of a workspace's own tasks (its
 * `local` number): keyed on the global number, whose remainder by 20 is the workspace's, every
 * task of a workspace had the same due date kind, priority, tags and notes (workspace 0's all
 * undated, with no notes and no rare word).
 */
export async function seedTasks(
  client: pg.ClientBase,
  workspaces: string[],
  from: number,
  to: number,
  label: string,
): Promise<void> {
  const batch = 20_000;
  const progress = new Progress(label, to - from);
  for (let start = from; start < to; start += batch) {
    const end = Math.min(to, start + batch);
    await client.query(
      `
      with params as (select $1::text[] as vocab, cardinality($1::text[]) as n, $4::uuid[] as ws, cardinality($4::uuid[]) as wn),
      rows as (
        select g,
          (g / (select wn from params)) as local,
          (select ws from params)[1 + g % (select wn from params)] as workspace_id
        from generate_series($2::int, $3::int - 1) g
      )
      insert into tasks.tasks (id, workspace_id, parent_id, title, notes, priority, due_at, completed_at, tags, position, created_at, updated_at)
      select
        md5('task:' || r.g)::uuid,
        r.workspace_id,
        case when r.local % 10 in (7, 8, 9) then md5('task:' || (r.g - (r.local % 10) * (select wn from params)))::uuid end,
        initcap((select string_agg(p.vocab[1 + floor(p.n * power(random(), 3))::int], ' ') from params p, generate_series(1, 3 + r.g % 5)))
          || case when r.local % 200 = 3 then ' ${RARE_WORD}' else '' end,
        case when r.local % 10 < 3 then null else
          (select string_agg(p.vocab[1 + floor(p.n * power(random(), 2))::int], ' ') from params p, generate_series(1, 12 + r.g % 48))
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
      from rows r`,
      [VOCABULARY, start, end, workspaces],
    );
    progress.tick(end - start);
  }
  // New tasks append from the app's position sequence: keep it above the seeded positions.
  await client.query(
    `select setval('tasks.tasks_position_seq', (select coalesce(max(floor(position)), 0) from tasks.tasks)::bigint + 1)`,
  );
  progress.finish();
}
