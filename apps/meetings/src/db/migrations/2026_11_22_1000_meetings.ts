import { sql, type Kysely } from 'kysely';

/**
 * People, series, meetings, items and daily notes. Every table carries account_id; every list,
 * filter and sort the API serves has an index here, and free-text search uses pg_trgm GIN
 * indexes so ILIKE '%q%' never scans a whole table.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create extension if not exists pg_trgm with schema public`.execute(db);

  await sql`
    create table people (
      id uuid primary key default gen_random_uuid(),
      account_id uuid not null references accounts(id) on delete cascade,
      name text not null,
      email text,
      archived_at timestamptz,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )`.execute(db);
  await sql`create index people_account_idx on people (account_id, created_at, id)`.execute(db);

  await sql`
    create table series (
      id uuid primary key default gen_random_uuid(),
      account_id uuid not null references accounts(id) on delete cascade,
      title text not null,
      cadence text not null check (cadence in ('WEEKLY', 'BIWEEKLY', 'MONTHLY')),
      weekday smallint check (weekday between 0 and 6),
      month_day smallint check (month_day between 1 and 31),
      start_time text not null,
      duration_minutes integer not null,
      timezone text not null,
      start_date date not null,
      participant_ids uuid[] not null default '{}',
      archived_at timestamptz,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )`.execute(db);
  await sql`create index series_account_idx on series (account_id, created_at, id)`.execute(db);

  await sql`
    create table meetings (
      id uuid primary key default gen_random_uuid(),
      account_id uuid not null references accounts(id) on delete cascade,
      series_id uuid not null references series(id) on delete cascade,
      date date,
      starts_at timestamptz,
      status text not null check (status in ('DRAFT', 'SCHEDULED', 'IN_PROGRESS', 'COMPLETED', 'SKIPPED')),
      shared_notes text not null default '',
      private_notes text not null default '',
      revision integer not null default 1,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      deleted_at timestamptz
    )`.execute(db);
  // One parking lot per series and one occurrence per series and date: concurrent carries and
  // materializations race on these, and exactly one insert wins.
  await sql`create unique index meetings_parking_lot_key on meetings (series_id) where date is null and deleted_at is null`.execute(
    db,
  );
  await sql`create unique index meetings_series_date_key on meetings (series_id, date) where date is not null and deleted_at is null`.execute(
    db,
  );
  // Lists sort by date with the undated parking lots last ('infinity'), so keyset cursors stay simple.
  await sql`create index meetings_account_list_idx on meetings (account_id, (coalesce(date, 'infinity'::date)), id) where deleted_at is null`.execute(
    db,
  );
  await sql`create index meetings_series_list_idx on meetings (series_id, (coalesce(date, 'infinity'::date)), id) where deleted_at is null`.execute(
    db,
  );
  // Materializing asks for the latest date a series ever had, deleted occurrences included.
  await sql`create index meetings_series_idx on meetings (series_id, date)`.execute(db);
  await sql`create index meetings_shared_notes_trgm on meetings using gin (shared_notes gin_trgm_ops)`.execute(db);
  await sql`create index meetings_private_notes_trgm on meetings using gin (private_notes gin_trgm_ops)`.execute(db);

  await sql`
    create table items (
      id uuid primary key default gen_random_uuid(),
      account_id uuid not null references accounts(id) on delete cascade,
      meeting_id uuid not null references meetings(id) on delete cascade,
      parent_id uuid references items(id) on delete cascade,
      kind text not null check (kind in ('TALKING_POINT', 'ACTION', 'DECISION')),
      text text not null,
      notes text not null default '',
      starred boolean not null default false,
      owner text,
      due_date date,
      completed_at timestamptz,
      status text not null default 'OPEN' check (status in ('OPEN', 'CARRIED')),
      carry_count integer not null default 0,
      from_item_id uuid,
      from_meeting_id uuid,
      carried_at timestamptz,
      position integer not null,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )`.execute(db);
  await sql`create index items_meeting_idx on items (meeting_id, position)`.execute(db);
  await sql`create index items_parent_idx on items (parent_id) where parent_id is not null`.execute(db);
  await sql`create index items_account_idx on items (account_id, created_at)`.execute(db);
  await sql`create index items_actions_idx on items (account_id, due_date, created_at, id) where kind = 'ACTION' and status = 'OPEN'`.execute(
    db,
  );
  await sql`create index items_open_actions_idx on items (account_id, due_date, created_at, id) where kind = 'ACTION' and status = 'OPEN' and completed_at is null`.execute(
    db,
  );
  await sql`create index items_text_trgm on items using gin (text gin_trgm_ops)`.execute(db);
  await sql`create index items_notes_trgm on items using gin (notes gin_trgm_ops)`.execute(db);

  await sql`
    create table notes (
      id uuid primary key default gen_random_uuid(),
      account_id uuid not null references accounts(id) on delete cascade,
      date date not null,
      yesterday text not null,
      today text not null,
      impediments text[] not null,
      today_priority text not null,
      search_text text not null,
      revision integer not null,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      deleted_at timestamptz
    )`.execute(db);
  await sql`create unique index notes_account_date_key on notes (account_id, date)`.execute(db);
  await sql`create index notes_account_changed_idx on notes (account_id, updated_at, date)`.execute(db);
  await sql`create index notes_search_trgm on notes using gin (search_text gin_trgm_ops)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['notes', 'items', 'meetings', 'series', 'people']) {
    await sql`drop table if exists ${sql.id(table)}`.execute(db);
  }
}
