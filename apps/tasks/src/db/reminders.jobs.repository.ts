import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.js';
import { findTask, type TaskState } from './tasks.repository.js';
import type { ReminderRow } from './reminders.repository.js';

type Db = Kysely<Database>;

/** A row a job fires for, with its task and the account whose subscriptions hear of it (the workspace's owner). */
interface Due {
  task: TaskState;
  ownerId: string;
}

/** The task of a reminder that is due and not fired, the reminder locked (null otherwise). */
export async function lockDueReminder(db: Db, reminderId: string): Promise<Due | null> {
  const row = await db
    .selectFrom('task_reminders as r')
    .innerJoin('tasks as t', 't.id', 'r.task_id')
    .innerJoin('workspaces as w', 'w.id', 't.workspace_id')
    .select(['r.task_id', 't.workspace_id', 'w.owner_account_id'])
    .where('r.id', '=', reminderId)
    .where('r.fired_at', 'is', null)
    .where(sql<boolean>`r.fires_at <= now()`)
    .forUpdate('r')
    .executeTakeFirst();
  if (!row) return null;
  const task = await findTask(db, row.workspace_id, row.task_id);
  return task ? { task, ownerId: row.owner_account_id } : null;
}

export async function markFired(db: Db, reminderId: string): Promise<ReminderRow> {
  return db
    .updateTable('task_reminders')
    .set({ fired_at: sql<string>`clock_timestamp()` })
    .where('id', '=', reminderId)
    .returning(['id', 'task_id', 'at', 'before', 'fires_at', 'fired_at'])
    .executeTakeFirstOrThrow();
}

/** An open, live task whose due time has come, locked (null otherwise). */
export async function lockDueTask(db: Db, taskId: string): Promise<Due | null> {
  const row = await db
    .selectFrom('tasks as t')
    .innerJoin('workspaces as w', 'w.id', 't.workspace_id')
    .select(['t.workspace_id', 'w.owner_account_id'])
    .where('t.id', '=', taskId)
    .where('t.completed_at', 'is', null)
    .where('t.deleted_at', 'is', null)
    .where(sql<boolean>`t.due_at <= now()`)
    .forUpdate('t')
    .executeTakeFirst();
  if (!row) return null;
  const task = await findTask(db, row.workspace_id, taskId);
  return task ? { task, ownerId: row.owner_account_id } : null;
}

/** Records that `task.due` is sent for this due time; false when it already was. */
export async function recordDueEvent(db: Db, taskId: string, dueAt: string): Promise<boolean> {
  const row = await db
    .insertInto('task_due_events')
    .values({ task_id: taskId, due_at: dueAt })
    .onConflict((oc) => oc.doNothing())
    .returning('task_id')
    .executeTakeFirst();
  return row !== undefined;
}

/** A reminder of a task of `workspaceId`, with its task (null when either is gone). */
export async function findReminderWithTask(
  db: Db,
  workspaceId: string,
  reminderId: string,
): Promise<{ reminder: ReminderRow; task: TaskState } | null> {
  const reminder = await db
    .selectFrom('task_reminders as r')
    .innerJoin('tasks as t', 't.id', 'r.task_id')
    .select(['r.id', 'r.task_id', 'r.at', 'r.before', 'r.fires_at', 'r.fired_at'])
    .where('r.id', '=', reminderId)
    .where('t.workspace_id', '=', workspaceId)
    .executeTakeFirst();
  const task = reminder && (await findTask(db, workspaceId, reminder.task_id));
  return reminder && task ? { reminder, task } : null;
}

/**
 * The reminders of `workspaceId` fired and the `task.due` events sent at or after `since`, oldest
 * first (the indexes of the 2026_11_28_1400 migration find them).
 */
export async function firedSince(
  db: Db,
  workspaceId: string,
  since: Date,
): Promise<Array<{ type: 'reminder.fired' | 'task.due'; id: string }>> {
  const { rows } = await sql<{ type: 'reminder.fired' | 'task.due'; id: string }>`
    select type, id from (
      select 'reminder.fired' as type, r.id, r.fired_at as at
      from task_reminders r join tasks t on t.id = r.task_id
      where r.fired_at >= ${since} and t.workspace_id = ${workspaceId}
      union all
      select 'task.due', e.task_id, e.sent_at
      from task_due_events e join tasks t on t.id = e.task_id
      where e.sent_at >= ${since} and t.workspace_id = ${workspaceId}
    ) announced
    order by at`.execute(db);
  return rows;
}

/**
 * Queues the jobs the triggers could not (written before any worker installed the queue) or whose
 * job a killed process holds locked: every reminder still to fire, every open task due from a day
 * ago on whose due time `task.due` is not sent. A job already waiting keeps its time.
 */
export async function queueMissedJobs(db: Db): Promise<void> {
  await sql`
    select tasks_worker.add_job('reminder', json_build_object('r', id), run_at := fires_at,
      job_key := 'reminder:' || id, job_key_mode := 'preserve_run_at')
    from task_reminders where fired_at is null and fires_at is not null`.execute(db);
  await sql`
    select tasks_worker.add_job('task_due', json_build_object('t', t.id), run_at := t.due_at,
      job_key := 'due:' || t.id, job_key_mode := 'preserve_run_at')
    from tasks t
    where t.completed_at is null and t.deleted_at is null and t.due_at >= now() - interval '1 day'
      and not exists (select from task_due_events e where e.task_id = t.id and e.due_at = t.due_at)`.execute(db);
}
