import type pg from 'pg';
import { Progress } from '../progress.js';
import { poolWords, seedWordPool } from './word-pool.js';

/**
 * Small tasks accounts of the mixed scenario, each with its personal workspace (as the admin
 * command makes them); returns them in order. Their tasks come from `seedTasks`.
 */
export async function seedFleetTaskAccounts(
  client: pg.ClientBase,
  count: number,
): Promise<Array<{ accountId: string; workspaceId: string }>> {
  const { rows } = await client.query<{ accountId: string; workspaceId: string; n: number }>(
    `
    with a as (
      insert into tasks.accounts (email, timezone)
      select 'fleet-tasks-' || n || '@example.test', 'Europe/Berlin' from generate_series(0, $1::int - 1) n
      returning id, email
    )
    insert into tasks.workspaces (owner_account_id, name)
    select id, 'Personal' from a
    returning owner_account_id as "accountId", id as "workspaceId"`,
    [count],
  );
  return rows;
}

/**
 * Small meetings accounts of the mixed scenario: each has one weekly series with `meetings`
 * meetings (the last two scheduled, the rest completed) of `items` items, and a daily note for
 * today (revision 1). Returns the accounts with a completed meeting that has a `previous` and
 * the note's date.
 */
export async function seedFleetMeetings(
  client: pg.ClientBase,
  count: number,
  meetings = 6,
  items = 10,
): Promise<{ accounts: Array<{ accountId: string; meetingId: string }>; noteDate: string }> {
  const progress = new Progress('meetings (fleet)', count);
  await seedWordPool(client);
  const text = (words: string) => poolWords(3, words);
  const { rows: accounts } = await client.query<{ id: string }>(
    `insert into meetings.accounts (email, timezone) select 'fleet-meetings-' || n || '@example.test', 'Europe/Berlin' from generate_series(0, $1::int - 1) n returning id`,
    [count],
  );
  const ids = accounts.map((a) => a.id);
  await client.query(
    `
    insert into meetings.series (account_id, title, cadence, weekday, start_time, duration_minutes, timezone, start_date)
    select a, 'Weekly sync', 'WEEKLY', extract(isodow from current_date - $2::int * 7)::int % 7, '10:00', 30, 'Europe/Berlin', current_date - $2::int * 7
    from unnest($1::uuid[]) a`,
    [ids, meetings - 2],
  );
  await client.query(
    `
    insert into meetings.meetings (account_id, series_id, date, starts_at, status, shared_notes, revision)
    select s.account_id, s.id, s.start_date + k * 7, ((s.start_date + k * 7)::text || ' 10:00')::timestamp at time zone 'Europe/Berlin',
      case when k < $2::int - 2 then 'COMPLETED' else 'SCHEDULED' end, ${text('20 + k % 30')}, 1
    from meetings.series s, generate_series(0, $2::int - 1) k
    where s.account_id = any($1::uuid[])`,
    [ids, meetings],
  );
  await client.query(
    `
    insert into meetings.items (account_id, meeting_id, kind, text, owner, due_date, position)
    select m.account_id, m.id,
      case when n % 10 < 5 then 'TALKING_POINT' when n % 10 < 8 then 'ACTION' else 'DECISION' end,
      ${text('5 + n % 10')},
      case when n % 10 between 5 and 7 then 'Person ' || n end,
      case when n % 10 between 5 and 7 then m.date + n end,
      n
    from meetings.meetings m, generate_series(1, $2::int) n
    where m.account_id = any($1::uuid[])`,
    [ids, items],
  );
  await client.query(
    `
    insert into meetings.notes (account_id, date, yesterday, today, impediments, today_priority, search_text, revision)
    select a, current_date, 'Reviewed the backlog', 'Pairing on the release', '{}', 'Ship it', 'Reviewed the backlog Pairing on the release Ship it', 1
    from unnest($1::uuid[]) a`,
    [ids],
  );
  const { rows } = await client.query<{ accountId: string; meetingId: string }>(
    `
    select m.account_id as "accountId", (array_agg(m.id order by m.date))[$2::int] as "meetingId"
    from meetings.meetings m where m.account_id = any($1::uuid[]) and m.status = 'COMPLETED'
    group by m.account_id`,
    [ids, meetings - 3],
  );
  const { rows: today } = await client.query<{ d: string }>(`select current_date::text as d`);
  progress.tick(count);
  progress.finish();
  return { accounts: rows, noteDate: today[0]!.d };
}
