import { sql, type Kysely } from 'kysely';

/**
 * tasks_due_idx carries the columns a filter's candidates are ordered and judged by (issue 61: a
 * filter with a date range over a 50,000-task workspace read a heap page per open task in the
 * range, 9,769 buffers and ~45 ms a request). With them an expression over dates, priority, tags
 * and level is an index-only scan of one range, and only the page's rows are read from the table.
 * The same index as before otherwise, so a write maintains no more indexes than it did.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`drop index tasks_due_idx`.execute(db);
  await sql`create index tasks_due_idx on tasks (workspace_id, due_at)
    include (completed_at, priority, tags, parent_id, position, created_at, id) where deleted_at is null`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index tasks_due_idx`.execute(db);
  await sql`create index tasks_due_idx on tasks (workspace_id, due_at) where deleted_at is null`.execute(db);
}
