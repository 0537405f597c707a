import { sql, type Kysely } from 'kysely';
import { streamAnnounceFunction } from '@app/auth/migrations';

/**
 * A write is announced only while some process streams its account (`stream_announce`,
 * @app/auth/streams): a notice on every write serialized every commit. The row is stamped
 * with the transaction id first, so the transaction holds its id before it looks.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const announce = await streamAnnounceFunction(db);
  await sql`
    create or replace function meetings_feed_stamp() returns trigger language plpgsql as $$
    begin
      new.change_xid := pg_current_xact_id();
      perform ${announce}(new.account_id, (new.change_xid::text::numeric + 1)::text);
      return new;
    end $$`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    create or replace function meetings_feed_stamp() returns trigger language plpgsql as $$
    begin
      new.change_xid := pg_current_xact_id();
      perform pg_notify('meetings_streams', 'c:' || new.account_id::text || ':' || (new.change_xid::text::numeric + 1)::text);
      return new;
    end $$`.execute(db);
}
