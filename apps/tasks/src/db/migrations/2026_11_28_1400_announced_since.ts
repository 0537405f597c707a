import { sql, type Kysely } from 'kysely';

/**
 * What a tasks stream reads again after its process's notification listener was lost (Postgres
 * restarting): the reminders fired and the `task.due` events sent since a moment, by time.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index task_reminders_fired_idx on task_reminders (fired_at) where fired_at is not null`.execute(db);
  await sql`create index task_due_events_sent_idx on task_due_events (sent_at)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index task_due_events_sent_idx`.execute(db);
  await sql`drop index task_reminders_fired_idx`.execute(db);
}
