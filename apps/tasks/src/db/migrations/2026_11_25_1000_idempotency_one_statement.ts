import { sql, type Kysely } from 'kysely';

/**
 * A keyed create is one statement (insert the task, keep its key with the answer), so a key taken
 * meanwhile by a concurrent create must abort that statement, task and all: `tasks_key_claimed`
 * raises SQLSTATE TK409 when given false (the statement's own check that its key row was written).
 *
 * The kept answer becomes the created row as that statement returned it (`row_to_json`, the
 * columns' names), from which a replay builds the response as a create does. Answers kept before
 * this migration (the response body, `{"item": {...}}` with the API's names) are rewritten to it.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create function tasks_key_claimed(claimed boolean) returns boolean language plpgsql as $$
    begin
      if not claimed then
        raise exception 'idempotency key taken by a concurrent create' using errcode = 'TK409';
      end if;
      return true;
    end $$`.execute(db);
  await sql`
    update task_idempotency_keys set response = json_build_object(
      'id', response->'item'->'id', 'title', response->'item'->'title', 'notes', response->'item'->'notes',
      'priority', response->'item'->'priority', 'due_at', response->'item'->'dueAt', 'completed_at', response->'item'->'completedAt',
      'tags', response->'item'->'tags', 'created_at', response->'item'->'createdAt', 'updated_at', response->'item'->'updatedAt',
      'parent_id', response->'item'->'parentId', 'goal_id', response->'item'->'goalId', 'recurrence', response->'item'->'recurrence',
      'location', response->'item'->'location', 'assignee_id', response->'item'->'assigneeId')
    where response->'item' is not null`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    update task_idempotency_keys set response = json_build_object('item', json_build_object(
      'id', response->'id', 'title', response->'title', 'notes', response->'notes',
      'priority', response->'priority', 'dueAt', response->'due_at', 'completedAt', response->'completed_at',
      'tags', response->'tags', 'createdAt', response->'created_at', 'updatedAt', response->'updated_at',
      'parentId', response->'parent_id', 'goalId', response->'goal_id', 'recurrence', response->'recurrence',
      'location', response->'location', 'assigneeId', response->'assignee_id'))
    where response->'item' is null`.execute(db);
  await sql`drop function tasks_key_claimed(boolean)`.execute(db);
}
