import { sql, type Kysely } from 'kysely';

/**
 * Reminders and due times fire from the service's graphile-worker queue (`tasks_worker`, the
 * one the webhook worker runs), never from a timer of one process: every write that sets a
 * reminder's `fires_at` or a task's `due_at` queues (or, under the same job key, moves) the job
 * that fires it at that time (`run_at`); a removal or a completion drops it. The job checks the
 * row again under its lock, so a job left behind fires nothing.
 *
 * The queue's functions exist once a worker has installed them: until then the triggers queue
 * nothing, and the worker's start queues what they missed (reminders.jobs.ts).
 *
 * `task_due_events` records each occurrence whose `task.due` was sent: once per task and due time.
 *
 * The functions keep the migration's search_path (`set search_path from current`), so a write from
 * a session with another one (psql, the bench's seed) still finds them.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table task_due_events (
      task_id uuid not null references tasks(id) on delete cascade,
      due_at timestamptz not null,
      sent_at timestamptz not null default clock_timestamp(),
      primary key (task_id, due_at)
    )`.execute(db);
  // What the worker's start looks through: open tasks by due time, the reminders still to fire.
  await sql`create index tasks_open_due_at_idx on tasks (due_at) where completed_at is null and deleted_at is null and due_at is not null`.execute(
    db,
  );
  await sql`create index task_reminders_pending_idx on task_reminders (fires_at) where fired_at is null and fires_at is not null`.execute(
    db,
  );
  await sql`
    create function tasks_queue_job(p_task text, p_key text, p_payload json, p_run_at timestamptz) returns void
    language plpgsql set search_path from current as $$
    begin
      if to_regprocedure('tasks_worker.remove_job(text)') is null then return; end if;
      if p_run_at is null then
        perform tasks_worker.remove_job(p_key);
      else
        perform tasks_worker.add_job(p_task, p_payload, run_at := p_run_at, job_key := p_key, job_key_mode := 'replace');
      end if;
    end $$`.execute(db);
  await sql`
    create function task_reminders_schedule() returns trigger language plpgsql set search_path from current as $$
    begin
      if tg_op = 'DELETE' then
        perform tasks_queue_job('reminder', 'reminder:' || old.id, null, null);
        return old;
      end if;
      perform tasks_queue_job('reminder', 'reminder:' || new.id, json_build_object('r', new.id),
        case when new.fired_at is null then new.fires_at end);
      return new;
    end $$`.execute(db);
  await sql`
    create trigger task_reminders_schedule after insert or delete or update of fires_at, fired_at on task_reminders
    for each row execute function task_reminders_schedule()`.execute(db);
  await sql`
    create function tasks_due_schedule() returns trigger language plpgsql set search_path from current as $$
    begin
      perform tasks_queue_job('task_due', 'due:' || new.id, json_build_object('t', new.id),
        case when new.completed_at is null and new.deleted_at is null then new.due_at end);
      return new;
    end $$`.execute(db);
  await sql`
    create trigger tasks_due_schedule_insert after insert on tasks
    for each row when (new.due_at is not null) execute function tasks_due_schedule()`.execute(db);
  await sql`
    create trigger tasks_due_schedule_update after update of due_at, completed_at, deleted_at on tasks
    for each row when (old.due_at is distinct from new.due_at or old.completed_at is distinct from new.completed_at
      or old.deleted_at is distinct from new.deleted_at) execute function tasks_due_schedule()`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger tasks_due_schedule_update on tasks`.execute(db);
  await sql`drop trigger tasks_due_schedule_insert on tasks`.execute(db);
  await sql`drop function tasks_due_schedule()`.execute(db);
  await sql`drop trigger task_reminders_schedule on task_reminders`.execute(db);
  await sql`drop function task_reminders_schedule()`.execute(db);
  await sql`drop function tasks_queue_job(text, text, json, timestamptz)`.execute(db);
  await sql`drop index task_reminders_pending_idx`.execute(db);
  await sql`drop index tasks_open_due_at_idx`.execute(db);
  await sql`drop table task_due_events`.execute(db);
}
