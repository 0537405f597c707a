import { sql, type Kysely } from 'kysely';
import { streamAnnounceFunction } from '@app/auth/migrations';

/**
 * A write is announced only while some process streams its account (`stream_announce`,
 * @app/auth/streams): a notice on every write serialized every commit. The trigger runs after
 * the state row's update, so the transaction already holds its id when it looks.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const announce = await streamAnnounceFunction(db);
  await sql`
    create or replace function clipboard_stream_notify() returns trigger language plpgsql as $$
    begin
      perform ${announce}(new.account_id, new.seq::text);
      return null;
    end $$`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    create or replace function clipboard_stream_notify() returns trigger language plpgsql as $$
    begin
      perform pg_notify('clipboard_streams', 'c:' || new.account_id::text || ':' || new.seq::text);
      return null;
    end $$`.execute(db);
}
