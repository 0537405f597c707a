import { sql, type Kysely } from 'kysely';

/**
 * Tasks. Top-level tasks carry a fractional `position` (numeric: a midpoint always exists, so a
 * move writes one row); subtasks have none and are ordered by creation under their parent.
 * `search` is the full-text document (title weight A, notes weight B), kept by Postgres.
 */
export async function up(db: Kysely<any>): Promise<void> {
  // btree_gin lets one GIN index serve "this workspace AND this tag / these words".
  await sql`create extension if not exists btree_gin with schema public`.execute(db);
  await sql`
    create table tasks (
      id uuid primary key default gen_random_uuid(),
      workspace_id uuid not null references workspaces(id) on delete cascade,
      parent_id uuid references tasks(id) on delete cascade,
      title text not null,
      notes text,
      priority text check (priority in ('high', 'medium', 'low')),
      due_at timestamptz,
      completed_at timestamptz,
      tags text[] not null default '{}',
      goal_id uuid,
      recurrence text,
      location text,
      assignee_id text,
      position numeric,
      -- clock_timestamp: rows inserted by one statement (a recurrence copy) keep their order.
      created_at timestamptz not null default clock_timestamp(),
      updated_at timestamptz not null default clock_timestamp(),
      deleted_at timestamptz,
      search tsvector generated always as (
        setweight(to_tsvector('english', title), 'A') || setweight(to_tsvector('english', coalesce(notes, '')), 'B')
      ) stored,
      constraint tasks_position_only_top_level check ((parent_id is null) = (position is not null))
    )
  `.execute(db);
  // view=all: the manual order; unique, so two racing moves can never share a slot.
  await sql`create unique index tasks_order_key on tasks (workspace_id, position) where parent_id is null and deleted_at is null`.execute(
    db,
  );
  // view=today / upcoming: open tasks with a due time, by creation; due_at is checked inside the index.
  await sql`create index tasks_open_due_idx on tasks (workspace_id, created_at, id, due_at) where deleted_at is null and completed_at is null and due_at is not null`.execute(
    db,
  );
  await sql`create index tasks_completed_idx on tasks (workspace_id, created_at, id) where deleted_at is null and completed_at is not null`.execute(
    db,
  );
  await sql`create index tasks_parent_idx on tasks (parent_id, created_at, id)`.execute(db);
  await sql`create index tasks_tags_idx on tasks using gin (workspace_id, tags) where deleted_at is null`.execute(db);
  await sql`create index tasks_search_idx on tasks using gin (workspace_id, search) where deleted_at is null`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('tasks').execute();
}
