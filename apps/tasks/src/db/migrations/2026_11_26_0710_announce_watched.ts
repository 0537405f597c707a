import { sql, type Kysely } from 'kysely';
import { streamAnnounceFunction } from '@app/auth/migrations';

/**
 * A task's write is announced only while some process streams its workspace
 * (`stream_announce`, @app/auth/streams): a notice on every write serialized every commit.
 * The position is taken first, so the transaction holds its id before it looks.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const announce = await streamAnnounceFunction(db);
  await sql`
    create or replace function tasks_stream_notify() returns trigger language plpgsql as $$
    begin
      perform ${announce}(new.workspace_id, (pg_current_xact_id()::text::numeric + 1)::text);
      return new;
    end $$`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    create or replace function tasks_stream_notify() returns trigger language plpgsql as $$
    begin
      perform pg_notify('tasks_streams', 'c:' || new.workspace_id::text || ':' || (pg_current_xact_id()::text::numeric + 1)::text);
      return new;
    end $$`.execute(db);
}
