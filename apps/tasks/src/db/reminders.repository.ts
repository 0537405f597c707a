import { sql, type Kysely, type Selectable } from 'kysely';
import type { Database, TaskRemindersTable } from './schema.js';

type Db = Kysely<Database>;

export type ReminderRow = Pick<
  Selectable<TaskRemindersTable>,
  'id' | 'task_id' | 'at' | 'before' | 'fires_at' | 'fired_at'
>;

const REMINDER_COLUMNS = ['id', 'task_id', 'at', 'before', 'fires_at', 'fired_at'] as const;

/** A task's reminders, oldest first. */
export async function listReminders(db: Db, taskId: string): Promise<ReminderRow[]> {
  return db
    .selectFrom('task_reminders')
    .select(REMINDER_COLUMNS)
    .where('task_id', '=', taskId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

export async function countReminders(db: Db, taskId: string): Promise<number> {
  const row = await db
    .selectFrom('task_reminders')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('task_id', '=', taskId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * A new reminder of `taskId`: at `at`, or `beforeSeconds` before the task's due time as the
 * statement reads it (in the caller's transaction, which holds the task's lock).
 */
export async function insertReminder(
  db: Db,
  taskId: string,
  when: { at: string } | { before: string; beforeSeconds: number },
): Promise<ReminderRow> {
  const firesAt =
    'at' in when
      ? sql<string>`${when.at}::timestamptz`
      : sql<string>`(select due_at from tasks where id = ${taskId}) - make_interval(secs => ${when.beforeSeconds})`;
  return db
    .insertInto('task_reminders')
    .values({
      task_id: taskId,
      at: 'at' in when ? when.at : null,
      before: 'before' in when ? when.before : null,
      before_seconds: 'before' in when ? when.beforeSeconds : null,
      fires_at: firesAt,
    })
    .returning(REMINDER_COLUMNS)
    .executeTakeFirstOrThrow();
}

/** Deletes one reminder of the task; whether there was one. */
export async function deleteReminder(db: Db, taskId: string, id: string): Promise<boolean> {
  const result = await db
    .deleteFrom('task_reminders')
    .where('task_id', '=', taskId)
    .where('id', '=', id)
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/**
 * Copies the relative reminders of `fromTaskId` to the next occurrence `toTaskId` (one statement),
 * each at its distance before the new task's due time.
 */
export async function copyRelativeReminders(db: Db, fromTaskId: string, toTaskId: string): Promise<void> {
  await sql`
    insert into task_reminders (task_id, before, before_seconds, fires_at, created_at)
    select ${toTaskId}, r.before, r.before_seconds, t.due_at - make_interval(secs => r.before_seconds), clock_timestamp()
    from task_reminders r, tasks t
    where r.task_id = ${fromTaskId} and r.before_seconds is not null and t.id = ${toTaskId}
    order by r.created_at, r.id`.execute(db);
}
