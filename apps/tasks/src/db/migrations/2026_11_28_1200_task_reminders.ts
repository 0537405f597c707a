import { sql, type Kysely } from 'kysely';

/**
 * A task's reminders: at an instant (`at`) or a duration before its due time (`before`, kept as
 * the client wrote it, with its length in seconds). `fires_at` is stored, not computed on read:
 * the trigger keeps a relative reminder's time on its task's due time (every write path of the
 * task, one statement), and the firing looks it up by index.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table task_reminders (
      id uuid primary key default gen_random_uuid(),
      task_id uuid not null references tasks(id) on delete cascade,
      at timestamptz,
      before text,
      before_seconds int,
      fires_at timestamptz,
      fired_at timestamptz,
      created_at timestamptz not null default clock_timestamp(),
      check ((at is null) <> (before is null)),
      check ((before is null) = (before_seconds is null))
    )`.execute(db);
  // A task's reminders, in the order they were made (the list, the count under the limit, the copies).
  await sql`create index task_reminders_task_idx on task_reminders (task_id, created_at, id)`.execute(db);
  await sql`
    create function task_reminders_follow_due() returns trigger language plpgsql set search_path from current as $$
    begin
      update task_reminders set fires_at = new.due_at - make_interval(secs => before_seconds)
      where task_id = new.id and before_seconds is not null and fired_at is null;
      return new;
    end $$`.execute(db);
  await sql`
    create trigger tasks_reminders_follow_due after update of due_at on tasks
    for each row when (old.due_at is distinct from new.due_at) execute function task_reminders_follow_due()`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger tasks_reminders_follow_due on tasks`.execute(db);
  await sql`drop function task_reminders_follow_due()`.execute(db);
  await sql`drop table task_reminders`.execute(db);
}
