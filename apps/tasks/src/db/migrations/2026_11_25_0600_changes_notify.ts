import { sql, type Kysely } from 'kysely';

/**
 * Change streams: every write of a task announces itself on the `tasks_streams` channel as
 * `c:<workspace>:<position>`, from inside the writing statement (a row trigger, so a write gains
 * no round trip), delivered by Postgres when the transaction commits and dropped when it aborts;
 * notifications with the same text in one transaction are delivered once. The position is the
 * writer's transaction id + 1: a stream has the change once the feed's horizon reaches it.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create function tasks_stream_notify() returns trigger language plpgsql as $$
    begin
      perform pg_notify('tasks_streams', 'c:' || new.workspace_id::text || ':' || (pg_current_xact_id()::text::numeric + 1)::text);
      return new;
    end $$`.execute(db);
  await sql`create trigger tasks_stream_notify before insert or update on tasks for each row execute function tasks_stream_notify()`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger tasks_stream_notify on tasks`.execute(db);
  await sql`drop function tasks_stream_notify()`.execute(db);
}
