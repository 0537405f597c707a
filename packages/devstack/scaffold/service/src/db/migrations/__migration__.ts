import { sql, type Kysely } from 'kysely';
import { streamAnnounceFunction } from '@app/auth/migrations';

/**
 * The __resource__ table and its changes feed (the way tasks and meetings have theirs, see
 * @app/auth/streams' window). Every insert or update stamps the row with its writing
 * transaction's id (`change_xid`) in a row trigger inside the writing statement, and announces
 * `c:<account>:<xid + 1>` while some process streams that account (`stream_announce`). A delete
 * is a tombstone (`deleted_at`), so the feed can tell it.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table __name__ (
      id uuid primary key default gen_random_uuid(),
      account_id uuid not null references accounts(id) on delete cascade,
      title text not null,
      url text,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      deleted_at timestamptz,
      change_xid xid8 not null default pg_current_xact_id()
    )`.execute(db);
  // The list: one account's live records, oldest first, from a keyset cursor.
  await sql`create index __name___account_idx on __name__ (account_id, created_at, id) where deleted_at is null`.execute(
    db,
  );
  // The feed: one account's rows in change order, from a cursor.
  await sql`create index __name___changes_idx on __name__ (account_id, change_xid, id)`.execute(db);
  const announce = await streamAnnounceFunction(db);
  await sql`
    create function __name___feed_stamp() returns trigger language plpgsql as $$
    begin
      new.change_xid := pg_current_xact_id();
      perform ${announce}(new.account_id, (new.change_xid::text::numeric + 1)::text);
      return new;
    end $$`.execute(db);
  await sql`create trigger __name___feed_stamp before insert or update on __name__ for each row execute function __name___feed_stamp()`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table __name__`.execute(db);
  await sql`drop function __name___feed_stamp()`.execute(db);
}
