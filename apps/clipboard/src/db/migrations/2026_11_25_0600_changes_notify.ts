import { sql, type Kysely } from 'kysely';

/**
 * Pull streams: every write that moves an account's change log on (its `seq`, updated once per
 * write transaction by `close_changes` or `create_item`) announces `c:<account>:<seq>` on
 * `clipboard_streams`, from a row trigger inside that statement (no round trip), sent when the
 * transaction commits. Writers of one account commit in seq order (they hold its state row), so a
 * stream can read everything up to the announced seq as soon as the notice arrives.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create function clipboard_stream_notify() returns trigger language plpgsql as $$
    begin
      perform pg_notify('clipboard_streams', 'c:' || new.account_id::text || ':' || new.seq::text);
      return null;
    end $$`.execute(db);
  await sql`
    create trigger account_state_stream_notify after update of seq on account_state
    for each row when (new.seq > old.seq) execute function clipboard_stream_notify()`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger account_state_stream_notify on account_state`.execute(db);
  await sql`drop function clipboard_stream_notify()`.execute(db);
}
