import { sql, type Kysely } from 'kysely';

/**
 * The indexes of the filter language's terms (GET /api/v1/tasks?filter=), each over the live
 * tasks of a workspace. Served by indexes made before: `#tag` (tasks_tags_idx), `search:`
 * (tasks_search_idx), `completed` (tasks_completed_idx). Made here:
 * - tasks_due_idx: `today`, `tomorrow`, `overdue`, `next N days`, `due before:`, `due after:`
 *   (a range of due_at) and `no date` (due_at is null);
 * - tasks_priority_idx: `priority:`;
 * - tasks_assignee_idx: `assigned to:`;
 * - tasks_untagged_idx: `no tags`; tasks_recurring_idx: `recurring`; tasks_subtasks_idx: `subtask`.
 * A negated term (`!`) reads the workspace's tasks as any unindexed predicate does.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index tasks_due_idx on tasks (workspace_id, due_at) where deleted_at is null`.execute(db);
  await sql`create index tasks_priority_idx on tasks (workspace_id, priority) where deleted_at is null`.execute(db);
  await sql`create index tasks_assignee_idx on tasks (workspace_id, assignee_id) where deleted_at is null`.execute(db);
  await sql`create index tasks_untagged_idx on tasks (workspace_id) where deleted_at is null and tags = '{}'::text[]`.execute(
    db,
  );
  await sql`create index tasks_recurring_idx on tasks (workspace_id) where deleted_at is null and recurrence is not null`.execute(
    db,
  );
  await sql`create index tasks_subtasks_idx on tasks (workspace_id) where deleted_at is null and parent_id is not null`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const name of ['due', 'priority', 'assignee', 'untagged', 'recurring', 'subtasks'])
    await sql`drop index ${sql.raw(`tasks_${name}_idx`)}`.execute(db);
}
