import { sql, type Kysely } from 'kysely';

/**
 * A new note is one statement (see notes.repository's insertNewNote), which must count the
 * account's live notes only once it holds the account's notes lock (the one
 * locks.repository's lockAccountResource takes), or two creates at the limit could both pass.
 * A statement's own reads use the snapshot taken when it started, before the lock; a VOLATILE
 * function's statements each take a fresh one: this function takes the lock, then counts.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create function notes_live_count_locked(account uuid) returns bigint language plpgsql volatile as $$
    begin
      perform pg_advisory_xact_lock(hashtextextended(account::text || ':notes', 0));
      return (select count(*) from notes where account_id = account and deleted_at is null);
    end $$`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop function notes_live_count_locked(uuid)`.execute(db);
}
