import type { Kysely } from 'kysely';
import { sql } from 'kysely';

/**
 * Items, snippets, per-account state (settings + sync sequence) and the sync change log.
 * `account_state.non_favorites` is kept by statement-level triggers on `items`, so every code
 * path (API, sync, pruning, cascades) keeps it exact and history pruning never counts rows.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table account_state (
      account_id uuid primary key references accounts(id) on delete cascade,
      seq bigint not null default 0,
      min_retained_seq bigint not null default 0,
      non_favorites integer not null default 0,
      history_limit integer not null default 1000,
      retention_days integer not null default 0,
      capture_enabled boolean not null default true,
      settings_updated_at timestamptz
    )`.execute(db);

  await sql`
    create table items (
      id uuid primary key,
      account_id uuid not null references accounts(id) on delete cascade,
      type text not null,
      content text not null,
      source text not null,
      favorite boolean not null default false,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )`.execute(db);
  // The list: newest first; `favorite` included so the offset skip and the retention filter
  // run as an index-only scan even at offset 100000.
  await sql`create index items_list_idx on items (account_id, created_at desc, id desc) include (favorite)`.execute(db);
  await sql`create index items_favorites_idx on items (account_id, created_at desc, id desc) where favorite`.execute(
    db,
  );
  // Pruning by history limit and retention walks the oldest non-favorites.
  await sql`create index items_prune_idx on items (account_id, created_at, id) where not favorite`.execute(db);
  // Identical content moves the existing item to the top instead of duplicating it.
  await sql`create index items_content_idx on items (account_id, md5(content))`.execute(db);

  await sql`
    create function items_count_insert() returns trigger language plpgsql as $$
    begin
      update account_state s set non_favorites = s.non_favorites + n.c
        from (select account_id, count(*) as c from new_rows where not favorite group by account_id) n
        where s.account_id = n.account_id;
      return null;
    end $$`.execute(db);
  await sql`
    create function items_count_delete() returns trigger language plpgsql as $$
    begin
      update account_state s set non_favorites = s.non_favorites - o.c
        from (select account_id, count(*) as c from old_rows where not favorite group by account_id) o
        where s.account_id = o.account_id;
      return null;
    end $$`.execute(db);
  await sql`
    create function items_count_update() returns trigger language plpgsql as $$
    begin
      update account_state s set non_favorites = s.non_favorites + d.c
        from (
          select n.account_id, sum((not n.favorite)::int - (not o.favorite)::int) as c
          from new_rows n join old_rows o on o.id = n.id
          where n.favorite <> o.favorite
          group by n.account_id
        ) d
        where s.account_id = d.account_id;
      return null;
    end $$`.execute(db);
  await sql`create trigger items_count_insert after insert on items referencing new table as new_rows for each statement execute function items_count_insert()`.execute(
    db,
  );
  await sql`create trigger items_count_delete after delete on items referencing old table as old_rows for each statement execute function items_count_delete()`.execute(
    db,
  );
  await sql`create trigger items_count_update after update on items referencing old table as old_rows new table as new_rows for each statement execute function items_count_update()`.execute(
    db,
  );

  await sql`
    create table snippets (
      id uuid primary key,
      account_id uuid not null references accounts(id) on delete cascade,
      name text not null,
      content text not null,
      keyword text,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )`.execute(db);
  await sql`create index snippets_account_idx on snippets (account_id, lower(name), id)`.execute(db);
  await sql`create unique index snippets_keyword_key on snippets (account_id, lower(keyword)) where keyword is not null`.execute(
    db,
  );

  // One row per entity (the latest change): superseded changes collapse into it, so the log stays
  // as small as the set of live entities plus recent tombstones.
  await sql`
    create table changes (
      account_id uuid not null references accounts(id) on delete cascade,
      seq bigint not null,
      entity text not null,
      entity_id uuid not null,
      op text not null,
      changed_at timestamptz not null default now(),
      primary key (account_id, seq)
    )`.execute(db);
  await sql`create unique index changes_entity_key on changes (account_id, entity, entity_id)`.execute(db);
  await sql`create index changes_tombstones_idx on changes (account_id, changed_at) where op = 'delete'`.execute(db);

  await sql`
    create table sync_receipts (
      account_id uuid not null references accounts(id) on delete cascade,
      client_change_id uuid not null,
      status text not null,
      seq bigint,
      error text,
      created_at timestamptz not null default now(),
      primary key (account_id, client_change_id)
    )`.execute(db);
  await sql`create index sync_receipts_age_idx on sync_receipts (account_id, created_at)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table if exists sync_receipts, changes, snippets, items, account_state`.execute(db);
  await sql`drop function if exists items_count_insert(), items_count_delete(), items_count_update()`.execute(db);
}
