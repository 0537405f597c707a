import { sql, type Kysely } from 'kysely';

/** The API's name of each column a kept row has (the tasks table's, as the 2026_11_25_1000 migration kept them). */
const FIELDS = [
  ['id', 'id'],
  ['title', 'title'],
  ['notes', 'notes'],
  ['priority', 'priority'],
  ['dueAt', 'due_at'],
  ['completedAt', 'completed_at'],
  ['tags', 'tags'],
  ['createdAt', 'created_at'],
  ['updatedAt', 'updated_at'],
  ['parentId', 'parent_id'],
  ['goalId', 'goal_id'],
  ['recurrence', 'recurrence'],
  ['location', 'location'],
  ['assigneeId', 'assignee_id'],
] as const;
const TIMESTAMPS: ReadonlySet<string> = new Set(['due_at', 'completed_at', 'created_at', 'updated_at']);

/**
 * An Idempotency-Key's answer is kept as the API body it replays, versioned
 * (`{"v":1,"status":201,"body":{"item":{...}}}`), not as the created row: a column's name is no
 * longer stored data, and the answer is the task as toTask makes it, written by the create's
 * statement. Answers kept as rows are rewritten: the API's names, and timestamps as the API writes
 * them (a row_to_json `+00:00`, or a row's `+00`, becomes `Z`), as a replay used to make them.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const item = FIELDS.map(([field, column]) =>
    TIMESTAMPS.has(column)
      ? `'${field}', to_json(regexp_replace(replace(response->>'${column}', ' ', 'T'), '\\+00(:00)?$', 'Z'))`
      : `'${field}', response->'${column}'`,
  ).join(', ');
  await sql`
    update task_idempotency_keys
    set response = json_build_object('v', 1, 'status', status, 'body', json_build_object('item', json_build_object(${sql.raw(item)})))
    where status is not null and response->'v' is null`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  const row = FIELDS.map(([field, column]) => `'${column}', response->'body'->'item'->'${field}'`).join(', ');
  await sql`
    update task_idempotency_keys set response = json_build_object(${sql.raw(row)})
    where response->'v' is not null`.execute(db);
}
