import { inTransaction } from '@app/auth/runtime';
import { errors } from '@app/http-errors';
import type { Shape } from '@app/http-errors/validation';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import * as reminders from '../db/reminders.repository.js';
import * as repo from '../db/tasks.repository.js';
import { dueAtMillis } from './due-time.js';
import { fail, taskNotFound } from './errors.js';
import { LIMITS } from './limits.js';
import { DURATION_PATTERN, type createReminderSchema, type reminderSchema } from './reminder.schemas.js';
import type { Context } from './tasks.service.js';

type Db = Kysely<Database>;

/** A reminder as the API returns it (the response schema's six fields). */
export type Reminder = Shape<typeof reminderSchema>;
type ReminderCreate = Shape<typeof createReminderSchema>;

/** The spec's bounds of a relative reminder: PT1M to P30D. */
const MIN_BEFORE_SECONDS = 60;
const MAX_BEFORE_SECONDS = 30 * 86_400;
const UNIT_SECONDS = { W: 604_800, D: 86_400, H: 3_600, M: 60, S: 1 } as const;

/** The one place a row becomes an API reminder. */
export function toReminder(r: reminders.ReminderRow): Reminder {
  return { id: r.id, taskId: r.task_id, at: r.at, before: r.before, firesAt: r.fires_at, firedAt: r.fired_at };
}

/** The length of a duration the schema's pattern has accepted, in seconds (the part after `T` holds minutes, not months). */
function durationSeconds(duration: string): number {
  const [date = '', time = ''] = duration.slice(1).split('T');
  let seconds = 0;
  for (const [part, units] of [
    [date, 'WD'],
    [time, 'HMS'],
  ] as const) {
    for (const [, n, unit] of part.matchAll(/(\d+)([A-Z])/g)) {
      if (units.includes(unit!)) seconds += Number(n) * UNIT_SECONDS[unit as keyof typeof UNIT_SECONDS];
    }
  }
  return seconds;
}

function checkBefore(before: string): number {
  const seconds = new RegExp(DURATION_PATTERN).test(before) ? durationSeconds(before) : 0;
  if (seconds < MIN_BEFORE_SECONDS || seconds > MAX_BEFORE_SECONDS)
    throw errors.validation([{ path: '/before', message: 'must be a duration from PT1M to P30D' }]);
  return seconds;
}

/** The live task of the caller's workspace (locked, when asked: its reminders' count is then stable). */
async function liveTask(db: Db, ctx: Context, taskId: string, lock = false): Promise<repo.TaskState> {
  const task = await repo.findTask(db, ctx.workspaceId, taskId, lock);
  if (!task || task.deleted_at !== null) throw taskNotFound();
  return task;
}

/**
 * Adds a reminder to a task. The task's row is locked while its reminders are counted, so two
 * creates racing for the last of the 20 places are one 201 and one 409.
 */
export async function createReminder(db: Db, ctx: Context, taskId: string, input: ReminderCreate): Promise<Reminder> {
  if (input.at !== undefined && dueAtMillis(input.at) === undefined)
    throw errors.validation([{ path: '/at', message: 'is not a real calendar date and time' }]);
  const beforeSeconds = input.before === undefined ? undefined : checkBefore(input.before);
  return inTransaction(db, async (trx) => {
    const task = await liveTask(trx, ctx, taskId, true);
    if (beforeSeconds !== undefined && task.due_at === null)
      throw fail('no_due_time', 'The task has no dueAt: a reminder before it needs one');
    if ((await reminders.countReminders(trx, taskId)) >= LIMITS.remindersPerTask)
      throw fail('reminder_limit_reached', `A task can have at most ${LIMITS.remindersPerTask} reminders`);
    const row = await reminders.insertReminder(
      trx,
      taskId,
      beforeSeconds === undefined ? { at: input.at! } : { before: input.before!, beforeSeconds },
    );
    return toReminder(row);
  });
}

/** A live task's reminders, oldest first. */
export async function listReminders(db: Db, ctx: Context, taskId: string): Promise<Reminder[]> {
  await liveTask(db, ctx, taskId);
  return (await reminders.listReminders(db, taskId)).map(toReminder);
}

/** Removes one reminder of a live task (404 when either is missing). */
export async function deleteReminder(db: Db, ctx: Context, taskId: string, reminderId: string): Promise<void> {
  await liveTask(db, ctx, taskId);
  if (!(await reminders.deleteReminder(db, taskId, reminderId))) throw fail('not_found', 'Reminder not found');
}
