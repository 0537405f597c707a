import type { Kysely } from 'kysely';
import { inTransaction } from '@app/auth/runtime';
import * as repo from '../db/items.repository.js';
import * as meetingsRepo from '../db/meetings.repository.js';
import type { Database } from '../db/schema.js';
import * as seriesRepo from '../db/series.repository.js';
import { queueTaskSync } from '../db/task-sync.repository.js';
import type { ConnectionsService } from './connections.service.js';
import { fail, notFound } from './errors.js';
import { emit } from './events.js';
import { startsAtUtc } from './recurrence.js';
import { callTasksApi, tasksUnavailable, type TasksAnswer } from './tasks-link.js';
import { toItem, type ItemRow } from './views.js';

/** The local time an action's due date becomes in tasks (the end of a working day). */
const DUE_TIME = '17:00';
/** Tasks' longest title. */
const TITLE_MAX = 500;

/** Where the task comes from and what it names: the caller's origin and the meetings account's zone. */
interface SendContext {
  accountId: string;
  timezone: string;
  origin: string;
}

/** The task an action becomes (DESIGN "Actions into tasks"). */
function taskOf(item: ItemRow, seriesTitle: string, meetingDate: string | null, ctx: SendContext) {
  const title = item.text.length > TITLE_MAX ? `${item.text.slice(0, TITLE_MAX - 1)}…` : item.text;
  const notes = [
    `${seriesTitle}, ${meetingDate === null ? 'parking lot' : `meeting of ${meetingDate}`}`,
    `${ctx.origin}/api/meetings/${item.meeting_id}`,
  ].join('\n');
  // Tasks refuses a due time in the past: an overdue action goes without one.
  const dueAt = item.due_date === null ? null : startsAtUtc(item.due_date, DUE_TIME, ctx.timezone);
  return { title, notes, ...(dueAt !== null && Date.parse(dueAt) > Date.now() ? { dueAt } : {}) };
}

/** Tasks' answer to a create, as the task it made (or the reason it made none). */
function createdTask(answer: TasksAnswer): { id: string; completedAt: string | null } {
  if (answer.status === 401 || answer.status === 403)
    throw fail('not_connected', 'Tasks no longer accepts this connection; connect again');
  const task = (answer.body as { item?: { id?: unknown; completedAt?: unknown } } | null)?.item;
  if (answer.status === 201 && typeof task?.id === 'string')
    return { id: task.id, completedAt: typeof task.completedAt === 'string' ? task.completedAt : null };
  if (answer.status >= 400 && answer.status < 500) {
    const error = (answer.body as { error?: { code?: unknown; message?: unknown } } | null)?.error;
    const code = typeof error?.code === 'string' ? error.code : String(answer.status);
    const message = typeof error?.message === 'string' ? error.message : '';
    throw fail('tasks_refused', `Tasks refused the task: ${code} ${message}`.trim());
  }
  throw tasksUnavailable();
}

/**
 * POST /api/items/:id/send-to-tasks: creates the action's task with an Idempotency-Key derived
 * from the item (its id and round), so a retry or a second click makes one task, then links it.
 * An item already linked answers as it is. Tasks unreachable: 503, nothing changed here.
 */
export async function sendToTasks(db: Kysely<Database>, connections: ConnectionsService, ctx: SendContext, id: string) {
  const item = await repo.findItem(db, ctx.accountId, id);
  if (!item) throw notFound('Item');
  if (item.kind !== 'ACTION') throw fail('not_an_action', 'Only an ACTION item can be sent to tasks');
  if (item.linked_task_id !== null) return toItem(item);
  const access = await connections.access(ctx.accountId);
  if (!access) throw fail('not_connected', 'Connect a tasks account first (GET /api/me/connections/tasks/start)');
  const meeting = await meetingsRepo.findMeeting(db, ctx.accountId, item.meeting_id);
  const series = await seriesRepo.findSeries(db, ctx.accountId, item.series_id);
  if (!meeting || !series) throw notFound('Item');
  const answer = await callTasksApi(access, 'POST', '/api/v1/tasks', taskOf(item, series.title, meeting.date, ctx), {
    'Idempotency-Key': `meetings-item-${item.id}-${item.task_send_round}`,
  });
  const task = createdTask(answer);
  return inTransaction(db, async (trx) => {
    const row = await repo.findItem(trx, ctx.accountId, id, true);
    if (!row) throw notFound('Item');
    // A send that finished first (the same task, by the same key) has linked it already.
    if (row.linked_task_id !== null) return toItem(row);
    const updated = await repo.updateItem(trx, id, {
      linked_task_id: task.id,
      linked_task_completed_at: task.completedAt,
    });
    // From now on the account's sync job keeps the action and its task in step.
    await queueTaskSync(trx, ctx.accountId);
    return emit(trx, ctx.accountId, 'item.updated', toItem(updated), toItem(row));
  });
}
