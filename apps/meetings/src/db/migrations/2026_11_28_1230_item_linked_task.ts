import { sql, type Kysely } from 'kysely';

/**
 * Actions sent to tasks (DESIGN "Actions into tasks"). An item keeps the task's id and its
 * completion as meetings last saw it; the round of sending (the Idempotency-Key names it, so
 * sending again after the task was deleted makes a new one); and whether its own completion
 * still has to reach tasks. A connection keeps its place in tasks' changes feed.
 *
 * The `task_sync` job of the service's queue (`meetings_worker`, the one the webhook worker
 * runs) does both directions per account; `meetings_queue_job` queues it (nothing until a worker
 * has installed the queue: its start queues what is missing).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table items
    add column linked_task_id uuid,
    add column linked_task_completed_at timestamptz,
    add column task_send_round integer not null default 0,
    add column task_sync_pending boolean not null default false`.execute(db);
  await sql`create index items_linked_task_idx on items (account_id, linked_task_id) where linked_task_id is not null`.execute(
    db,
  );
  await sql`alter table task_connections add column changes_cursor text`.execute(db);
  await sql`
    create function meetings_queue_job(p_task text, p_key text, p_payload json, p_run_at timestamptz) returns void
    language plpgsql set search_path from current as $$
    begin
      if to_regprocedure('meetings_worker.remove_job(text)') is null then return; end if;
      perform meetings_worker.add_job(p_task, p_payload, run_at := p_run_at, job_key := p_key, job_key_mode := 'replace');
    end $$`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop function meetings_queue_job(text, text, json, timestamptz)`.execute(db);
  await sql`alter table task_connections drop column changes_cursor`.execute(db);
  await sql`alter table items
    drop column linked_task_id,
    drop column linked_task_completed_at,
    drop column task_send_round,
    drop column task_sync_pending`.execute(db);
}
