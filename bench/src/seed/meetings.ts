import type pg from 'pg';
import { Progress } from '../progress.js';
import { poolWords, seedWordPool } from './word-pool.js';
import { size } from '../size.js';

const SERIES = size(50, 3);
const MEETINGS_PER_SERIES = size(100, 6);
const ITEMS_PER_MEETING = size(40, 5);
const NOTES = size(5_000, 20);

/** Zipf-like text of `words` words from the vocabulary (the word pool), as a SQL expression. */
const text = (words: string) => poolWords(3, words);

/**
 * One account with 20 people, 50 weekly series, 5,000 meetings (the last two of each series
 * scheduled, the rest completed), 200,000 items (talking points, actions half of them done,
 * decisions) and 5,000 daily notes, through INSERT ... SELECT in the meetings schema.
 */
export async function seedMeetingsData(client: pg.ClientBase): Promise<{ accountId: string }> {
  const progress = new Progress('meetings', SERIES * MEETINGS_PER_SERIES * (ITEMS_PER_MEETING + 1) + NOTES);
  await seedWordPool(client);
  const { rows } = await client.query<{ id: string }>(
    `insert into meetings.accounts (email, timezone) values ('bench-meetings@example.test', 'Europe/Berlin') returning id`,
  );
  const accountId = rows[0]!.id;
  await client.query(
    `insert into meetings.people (account_id, name, email) select $1, 'Person ' || n, 'person' || n || '@example.test' from generate_series(1, 20) n`,
    [accountId],
  );
  await client.query(
    `
    insert into meetings.series (account_id, title, cadence, weekday, start_time, duration_minutes, timezone, start_date, participant_ids)
    select $1, '1:1 with ' || p.name, 'WEEKLY', extract(isodow from current_date - $2::int * 7)::int % 7, '10:00', 30, 'Europe/Berlin',
      current_date - $2::int * 7, array[p.id]
    from generate_series(0, $3::int - 1) s
    join lateral (select id, name from meetings.people where account_id = $1 order by name offset s % 20 limit 1) p on true`,
    [accountId, MEETINGS_PER_SERIES - 2, SERIES],
  );
  await client.query(
    `
    insert into meetings.meetings (account_id, series_id, date, starts_at, status, shared_notes, revision)
    select s.account_id, s.id, s.start_date + k * 7,
      ((s.start_date + k * 7)::text || ' 10:00')::timestamp at time zone 'Europe/Berlin',
      case when k < $2::int - 2 then 'COMPLETED' else 'SCHEDULED' end,
      ${text('30 + k % 50')}, 1
    from meetings.series s, generate_series(0, $2::int - 1) k
    where s.account_id = $1`,
    [accountId, MEETINGS_PER_SERIES],
  );
  progress.tick(SERIES * MEETINGS_PER_SERIES);
  const { rows: meetings } = await client.query<{ id: string }>(
    `select id from meetings.meetings where account_id = $1 order by series_id, date`,
    [accountId],
  );
  const batch = 250;
  for (let i = 0; i < meetings.length; i += batch) {
    const ids = meetings.slice(i, i + batch).map((m) => m.id);
    await client.query(
      `
      insert into meetings.items (account_id, meeting_id, kind, text, notes, starred, owner, due_date, completed_at, position)
      select m.account_id, m.id,
        case when n % 10 < 5 then 'TALKING_POINT' when n % 10 < 8 then 'ACTION' else 'DECISION' end,
        ${text('5 + n % 10')},
        case when n % 3 = 0 then ${text('10 + n % 20')} else '' end,
        n % 7 = 0,
        case when n % 10 between 5 and 7 then 'Person ' || (1 + n % 20) end,
        case when n % 10 between 5 and 7 then m.date + (n % 21) end,
        case when n % 10 between 5 and 7 and n % 2 = 0 then m.starts_at + interval '1 day' end,
        n
      from meetings.meetings m, generate_series(1, $2::int) n
      where m.id = any($1::uuid[])`,
      [ids, ITEMS_PER_MEETING],
    );
    progress.tick(ids.length * ITEMS_PER_MEETING);
  }
  await client.query(
    `
    insert into meetings.notes (account_id, date, yesterday, today, impediments, today_priority, search_text, revision)
    select $1, current_date - d, y, t, imp, pri, concat_ws(E'\\n', y, t, array_to_string(imp, E'\\n'), pri), 1
    from generate_series(0, $2::int - 1) d,
      lateral (select ${text('15 + d % 30')} as y, ${text('15 + d % 25')} as t,
        case when d % 4 = 0 then array[${text('6')}] else '{}'::text[] end as imp,
        ${text('4')} as pri) x`,
    [accountId, NOTES],
  );
  progress.tick(NOTES);
  progress.finish();
  return { accountId };
}

/**
 * Runs a meetings seed with the service's schema first on the search path: its triggers (the
 * changes feed's, which stamp an item's meeting) name its tables unqualified, as the service's own
 * connections see them.
 */
export async function inMeetingsSchema<T>(client: pg.ClientBase, seed: () => Promise<T>): Promise<T> {
  await client.query('set search_path = meetings, public');
  try {
    return await seed();
  } finally {
    await client.query('reset search_path');
  }
}
