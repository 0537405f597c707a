import type { ColumnType, Generated } from 'kysely';
import type { AuthDatabase } from '@app/auth/identity';

/** A timestamp the database fills in. */
type CreatedAt = ColumnType<string, string | undefined, never>;

interface WorkspacesTable {
  id: Generated<string>;
  owner_account_id: string;
  name: string;
  created_at: CreatedAt;
}

/** A timestamp the application sets. */
type Timestamp = ColumnType<string, string | undefined, string>;

export interface TasksTable {
  id: Generated<string>;
  workspace_id: string;
  parent_id: string | null;
  title: string;
  notes: string | null;
  priority: string | null;
  due_at: string | null;
  completed_at: string | null;
  tags: ColumnType<string[], string[] | undefined, string[]>;
  goal_id: string | null;
  recurrence: string | null;
  location: string | null;
  assignee_id: string | null;
  /** numeric, as its exact decimal text; null for subtasks. */
  position: string | null;
  created_at: CreatedAt;
  updated_at: Timestamp;
  deleted_at: string | null;
  /** xid8 of the transaction that wrote the row last, as decimal text; set by the database. */
  change_xid: ColumnType<string, never, never>;
  search: ColumnType<never, never, never>;
}

/** A create's Idempotency-Key, kept with the task it created (see the 2026_11_23_2200 migration). */
interface TaskIdempotencyKeysTable {
  account_id: string;
  key_hash: Buffer;
  fingerprint: string;
  task_id: string | null;
  status: number | null;
  response: ColumnType<unknown, string | null, string | null>;
  created_at: ColumnType<Date, never, never>;
}

/** A task's reminder (see the 2026_11_28_1200 migration). */
export interface TaskRemindersTable {
  id: Generated<string>;
  task_id: string;
  at: string | null;
  before: string | null;
  before_seconds: number | null;
  fires_at: string | null;
  fired_at: string | null;
  created_at: CreatedAt;
}

/** The occurrences whose `task.due` was sent (see the 2026_11_28_1300 migration). */
interface TaskDueEventsTable {
  task_id: string;
  due_at: string;
  sent_at: CreatedAt;
}

/** An applied batch command with its first result (see the 2026_11_28_1200 migration). */
interface TaskBatchCommandsTable {
  account_id: string;
  command_id: string;
  result: ColumnType<unknown, string | null, string | null>;
  created_at: ColumnType<Date, never, never>;
}

/** Every table of the tasks schema. */
export interface Database extends AuthDatabase {
  workspaces: WorkspacesTable;
  tasks: TasksTable;
  task_idempotency_keys: TaskIdempotencyKeysTable;
  task_reminders: TaskRemindersTable;
  task_due_events: TaskDueEventsTable;
  task_batch_commands: TaskBatchCommandsTable;
}
