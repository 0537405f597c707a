import { inTransaction } from '@app/auth/runtime';
import { announceStreamEvent } from '@app/auth/streams';
import { emitEvent } from '@app/auth/webhooks';
import { isUuid } from '@app/http-errors';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import * as jobs from '../db/reminders.jobs.repository.js';
import { findTask } from '../db/tasks.repository.js';
import { toReminder } from './reminders.service.js';
import { toTask } from './tasks.service.js';

type Db = Kysely<Database>;

/*
 * The queue's jobs (graphile-worker, in the worker role): each fires one thing at its time, in
 * one transaction that locks its row first, so it is sent once whichever process runs the job,
 * and a job run again (a retry, a start's catch-up, a replica) finds it sent.
 */

/**
 * `reminder` job: sends `reminder.fired` `{ reminder, task }` and sets `firedAt`, unless the
 * reminder is gone, fired, not yet due (its time moved: its own job comes later), or its task is
 * completed or deleted.
 */
async function fireReminder(db: Db, reminderId: string): Promise<void> {
  await inTransaction(db, async (trx) => {
    const due = await jobs.lockDueReminder(trx, reminderId);
    if (!due || due.task.completed_at !== null || due.task.deleted_at !== null) return;
    const reminder = await jobs.markFired(trx, reminderId);
    await emitEvent(trx, due.ownerId, 'reminder.fired', { reminder: toReminder(reminder), task: toTask(due.task) });
    await announceStreamEvent(trx, 'tasks', due.task.workspace_id, `reminder.fired:${reminderId}`);
  });
}

/** `task_due` job: sends `task.due` (the task as data) once per task and due time, while the task is open. */
async function sendTaskDue(db: Db, taskId: string): Promise<void> {
  await inTransaction(db, async (trx) => {
    const due = await jobs.lockDueTask(trx, taskId);
    if (!due || !(await jobs.recordDueEvent(trx, taskId, due.task.due_at!))) return;
    await emitEvent(trx, due.ownerId, 'task.due', toTask(due.task));
    await announceStreamEvent(trx, 'tasks', due.task.workspace_id, `task.due:${taskId}`);
  });
}

/**
 * An event the jobs announce to the workspace's open streams (`GET /api/v1/tasks/changes/stream`),
 * by its reference, `reminder.fired:<reminder id>` or `task.due:<task id>`, read for a stream of
 * `workspaceId`: `reminder.fired` `{ reminder, task }`, `task.due` the task (as the webhook's data).
 */
export async function streamEvent(
  db: Db,
  workspaceId: string,
  ref: string,
): Promise<{ type: string; data: unknown } | undefined> {
  const [type, id] = ref.split(':');
  if (!id || !isUuid(id)) return undefined;
  if (type === 'reminder.fired') {
    const found = await jobs.findReminderWithTask(db, workspaceId, id);
    return found ? { type, data: { reminder: toReminder(found.reminder), task: toTask(found.task) } } : undefined;
  }
  if (type === 'task.due') {
    const task = await findTask(db, workspaceId, id);
    return task ? { type, data: toTask(task) } : undefined;
  }
  return undefined;
}

/**
 * The references of the events the jobs announced to `workspaceId` at or after `since`, oldest
 * first (reminders by their firedAt, due times by when their `task.due` was sent): what its streams
 * read again when their notifications may have been lost.
 */
export async function announcedSince(db: Db, workspaceId: string, since: Date): Promise<string[]> {
  return (await jobs.firedSince(db, workspaceId, since)).map(({ type, id }) => `${type}:${id}`);
}

/** The queue's tasks of the tasks service, by name (the triggers of the 2026_11_28_1300 migration queue them). */
export function reminderJobs(db: Db) {
  return {
    reminder: async (payload: unknown) => {
      const id = (payload as { r?: unknown } | null)?.r;
      if (typeof id === 'string') await fireReminder(db, id);
    },
    task_due: async (payload: unknown) => {
      const id = (payload as { t?: unknown } | null)?.t;
      if (typeof id === 'string') await sendTaskDue(db, id);
    },
  };
}
