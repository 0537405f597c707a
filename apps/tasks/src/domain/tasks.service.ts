import { inTransaction } from '@app/auth/runtime';
import { emitEvent, previousOf } from '@app/auth/webhooks';
import { AppError, errors, pageWithin, type ErrorDetail } from '@app/http-errors';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { TaskEvent } from '../events.js';
import * as idempotency from '../db/idempotency.repository.js';
import * as repo from '../db/tasks.repository.js';
import { copyRelativeReminders } from '../db/reminders.repository.js';
import type { TaskRow, TaskState } from '../db/tasks.repository.js';
import { encodeCursor, listCursor, queryDigest, searchCursor } from './cursor.js';
import { dueAtMillis, type StartOfTomorrow } from './due-time.js';
import { UNREADABLE_RULE, nextDue, parseRecurrence } from './recurrence.js';
import { fail, taskNotFound } from './errors.js';
import { LIMITS } from './limits.js';
import type { Shape } from '@app/http-errors/validation';
import {
  createTaskSchema,
  taskSchema,
  type listQuerySchema,
  type taskWithSubtasksSchema,
  type updateTaskSchema,
} from './task.schemas.js';

type Db = Kysely<Database>;

/** A task as the API returns it: always exactly these 14 fields (the response schema's). */
export type Task = Shape<typeof taskSchema>;

export type TaskWithSubtasks = Task & { subtasks: Task[]; progress: Shape<typeof taskWithSubtasksSchema>['progress'] };

/** The edit fields, after schema validation. */
type TaskInput = Shape<typeof updateTaskSchema>;
/** The create fields (a title required), after schema validation. */
type TaskCreate = Shape<typeof createTaskSchema>;

/** Who acts, where: the caller's account (whose webhooks hear of it), workspace and time zone (X-Timezone or the account's). */
export interface Context {
  accountId: string;
  workspaceId: string;
  timezone: string;
}

/** The If-Match header: any current version (`*`), or the strong versions (updatedAt values) named. */
export type IfMatch = '*' | readonly string[];

type ListQuery = Shape<typeof listQuerySchema>;

const PRIORITIES: readonly string[] = ['high', 'medium', 'low'];

/** The column of an API field: the field's name in snake_case (dueAt: due_at). */
const columnOf = (field: string): string => field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** Each field of a schema's properties with its column, in the schema's order. */
const fieldColumns = <P extends object>(properties: P) =>
  Object.keys(properties).map((field) => [field as keyof P & string, columnOf(field)] as const);

/** The API task's fields (the response schema's), each with the column it reads. */
const TASK_FIELD_COLUMNS = fieldColumns(taskSchema.properties);

/** The fields a create or an edit sets (the request schema's), each with the column it writes. */
const INPUT_FIELD_COLUMNS = fieldColumns(createTaskSchema.properties);

/**
 * The one place a row becomes an API task (column names never reach the API): each field of the
 * response schema from its column, in the schema's order (so every task has the same shape).
 * The priority is stored only after checkPriority: one of the three.
 */
export function toTask(r: TaskRow): Task {
  const task: Record<string, unknown> = {};
  for (const [field, column] of TASK_FIELD_COLUMNS) task[field] = r[column as keyof TaskRow];
  return task as Task;
}

/** A row as a task with its subtasks and progress (added to the task, not spread into a copy: a tenth of a list page's CPU). */
function withSubtasks(r: TaskRow, subtasks: Task[]): TaskWithSubtasks {
  let completed = 0;
  for (const s of subtasks) if (s.completedAt !== null) completed += 1;
  const task = toTask(r) as TaskWithSubtasks;
  task.subtasks = subtasks;
  // No subtasks is not "all complete": a progress display has nothing to celebrate.
  task.progress = {
    completed,
    total: subtasks.length,
    allComplete: subtasks.length > 0 && completed === subtasks.length,
  };
  return task;
}

const notFound = () => taskNotFound();

/**
 * Records the event of this call in its transaction (one REST call, one event); returns the task.
 * An update passes the row as it was `before`: the event's `previous` holds what it changed.
 */
async function emit(trx: Db, ctx: Context, type: TaskEvent, task: Task, before?: TaskRow): Promise<Task> {
  await emitEvent(trx, ctx.accountId, type, task, before && previousOf(toTask(before), task));
  return task;
}

/** 400 for input the schema cannot judge: a due time on no real calendar day, repeat text we cannot read. */
function checkShape(input: TaskInput): void {
  const details: ErrorDetail[] = [];
  if (typeof input.dueAt === 'string' && dueAtMillis(input.dueAt) === undefined) {
    details.push({ path: '/dueAt', message: 'is not a real calendar date and time' });
  }
  if (typeof input.recurrence === 'string' && parseRecurrence(input.recurrence) === undefined) {
    details.push({ path: '/recurrence', message: UNREADABLE_RULE });
  }
  if (details.length > 0) throw errors.validation(details);
}

function checkPriority(priority: string | null | undefined): void {
  if (typeof priority === 'string' && !PRIORITIES.includes(priority)) {
    throw fail('invalid_priority', 'priority must be high, medium or low', {
      details: [{ path: '/priority', message: 'must be one of: high, medium, low' }],
    });
  }
}

function checkNotPast(dueAt: string): void {
  if (dueAtMillis(dueAt)! < Date.now() - LIMITS.pastDueGraceMs) {
    throw fail('due_date_in_past', 'dueAt is in the past', {
      details: [{ path: '/dueAt', message: 'must not be in the past' }],
    });
  }
}

function checkIfMatch(ifMatch: IfMatch | undefined, task: TaskState): void {
  if (ifMatch === undefined || ifMatch === '*') return;
  if (!ifMatch.includes(task.updated_at)) throw errors.preconditionFailed();
}

/** The parent named by parentId, locked (two racing creates cannot both take its last subtask slot); 404 unless live in the workspace. */
async function loadParent(trx: Db, ctx: Context, parentId: string): Promise<TaskState> {
  const parent = await repo.findTask(trx, ctx.workspaceId, parentId, true);
  if (!parent || parent.deleted_at !== null) throw taskNotFound('Parent task not found');
  return parent;
}

/** A parent must be another top-level task with room for one more subtask. */
async function checkParent(trx: Db, parent: TaskState, childId?: string): Promise<void> {
  if (parent.id === childId)
    throw fail('parent_is_self', 'A task cannot be its own parent', {
      details: [{ path: '/parentId', message: 'names the task itself' }],
    });
  if (parent.parent_id !== null) {
    throw fail('parent_is_subtask', 'Subtasks cannot have subtasks: parentId must name a top-level task', {
      details: [{ path: '/parentId', message: 'names a subtask' }],
    });
  }
  if ((await repo.countSubtasks(trx, parent.id)) >= LIMITS.subtasksPerParent) {
    throw fail('subtask_limit_reached', `A task can have at most ${LIMITS.subtasksPerParent} subtasks`);
  }
}

function uniqueTags(tags: string[]): string[] {
  return [...new Set(tags)];
}

function checkBusinessRules(input: TaskInput): void {
  checkPriority(input.priority);
  if (input.dueAt) checkNotPast(input.dueAt);
}

/**
 * The columns of a new task from its input: every input field, null when not given (tags: none).
 * Built in the schema's order, never spread from the input: a spread's copy got a hidden class
 * of its own on every create, so each read of its fields missed V8's inline caches (`node --log-ic`).
 */
function newTaskValues(input: TaskCreate): repo.NewTask {
  const values: Record<string, unknown> = {};
  for (const [field, column] of INPUT_FIELD_COLUMNS) values[column] = input[field] ?? null;
  values.tags = uniqueTags(input.tags ?? []);
  return values as repo.NewTask;
}

/**
 * The fields of a Task, each with the column it reads, as toTask makes them: a create's statement
 * writes its event's data and its key's answer with them (toTask is the one serializer).
 */
const TASK_FIELDS = repo.taskFields(toTask);

/** An Idempotency-Key create: the key as its SHA-256, and the request body's fingerprint. */
export type CreateKey = idempotency.Key;

/**
 * The create of {@link createTask}, or the key's first answer. A top-level task is one statement
 * (its place at the end of the order comes from a sequence: no lock); a subtask is that statement
 * in a transaction that locks and checks its parent first.
 */
async function createOrFind(
  db: Db,
  ctx: Context,
  input: TaskCreate,
  key: CreateKey | undefined,
): Promise<repo.Created> {
  checkShape(input);
  const options = { fields: TASK_FIELDS, event: { accountId: ctx.accountId, type: 'task.created' }, key };
  if (!input.parentId) {
    checkBusinessRules(input);
    return repo.createTask(db, ctx.workspaceId, newTaskValues(input), options);
  }
  const parentId = input.parentId;
  return inTransaction(db, async (trx) => {
    const parent = await loadParent(trx, ctx, parentId);
    checkBusinessRules(input);
    await checkParent(trx, parent);
    return repo.createTask(trx, ctx.workspaceId, newTaskValues(input), options);
  });
}

/**
 * Creates a task: a subtask under `parentId`, or a top-level task at the end of the manual order,
 * with its `task.created` event (an outbox row) in the same statement.
 *
 * With an Idempotency-Key (kept in Postgres with the answer, in that statement too) at most once
 * per key: the same key and body replay the first answer (`replayed`) for 24 hours, another body
 * is 409 `idempotency_key_conflict`. A concurrent create of the same key that committed first is
 * replayed. A refused create (4xx) under a key that holds an answer answers as the key does (a due
 * time that has passed since is no reason to refuse a replay); otherwise it keeps nothing, so a
 * corrected retry can use the key.
 */
export async function createTask(
  db: Db,
  ctx: Context,
  input: TaskCreate,
  key?: CreateKey,
): Promise<{ item: Task; replayed: boolean }> {
  let outcome: repo.Created;
  try {
    outcome = await createOrFind(db, ctx, input, key);
  } catch (err) {
    if (key === undefined || !(err instanceof AppError) || err.status >= 500) throw err;
    const kept = await idempotency.findKeptAnswer(db, key);
    if (!kept) throw err;
    outcome = { kept };
  }
  if (outcome === 'taken') {
    const kept = await idempotency.findKeptAnswer(db, key!);
    // The key's answer expired between the two statements: the caller may retry.
    if (!kept)
      throw fail(
        'idempotency_request_in_progress',
        'A request with this Idempotency-Key is still being processed; retry shortly',
      );
    outcome = { kept };
  }
  if ('created' in outcome) return { item: toTask(outcome.created), replayed: false };
  if (outcome.kept.fingerprint !== key!.fingerprint) {
    throw fail('idempotency_key_conflict', 'This Idempotency-Key was already used with a different request body');
  }
  return { item: (outcome.kept.answer.body as { item: Task }).item, replayed: true };
}

async function findLive(db: Db, ctx: Context, id: string, lock = false): Promise<TaskState> {
  const task = await repo.findTask(db, ctx.workspaceId, id, lock);
  if (!task || task.deleted_at !== null) throw notFound();
  return task;
}

/** One not deleted task with its subtasks. */
export async function getTask(db: Db, ctx: Context, id: string): Promise<TaskWithSubtasks> {
  const task = await findLive(db, ctx, id);
  const subtasks = task.parent_id === null ? await repo.listSubtasks(db, id) : [];
  return withSubtasks(task, subtasks.map(toTask));
}

/** auto-tag: a compatibility no-op that returns the task unchanged. */
export async function autoTag(db: Db, ctx: Context, id: string): Promise<Task> {
  return toTask(await findLive(db, ctx, id));
}

/** Partial edit. A changed parentId moves the task under a parent or (null) to the end of the manual order. */
export async function updateTask(db: Db, ctx: Context, id: string, input: TaskInput, ifMatch?: IfMatch): Promise<Task> {
  checkShape(input);
  if (isPlainEdit(input)) return plainEdit(db, ctx, id, input, ifMatch);
  return inTransaction(db, async (trx) => {
    const task = await findLive(trx, ctx, id, true);
    const moving = input.parentId !== undefined && input.parentId !== task.parent_id;
    const parent = moving && input.parentId ? await loadParent(trx, ctx, input.parentId) : undefined;
    checkIfMatch(ifMatch, task);
    if (Object.keys(input).length === 0) return toTask(task);
    checkPriority(input.priority);
    // Sending back the task's own due time (even if it has passed) is not a change.
    if (input.dueAt && (task.due_at === null || dueAtMillis(input.dueAt) !== dueAtMillis(task.due_at)))
      checkNotPast(input.dueAt);
    const changes: repo.TaskChanges = fieldChanges(input);
    if (moving) {
      if (parent) {
        await checkParent(trx, parent, id);
        if ((await repo.countSubtasks(trx, id)) > 0) {
          throw fail('task_has_subtasks', 'A task with subtasks cannot become a subtask', {
            details: [{ path: '/parentId', message: 'the task has subtasks' }],
          });
        }
        changes.position = null;
      } else {
        changes.position = repo.endPosition;
      }
      changes.parent_id = input.parentId ?? null;
    }
    return emit(trx, ctx, 'task.updated', toTask(await repo.updateTask(trx, ctx.workspaceId, id, changes)), task);
  });
}

/** The columns an edit of these fields writes (parentId aside: a move, which updateTask makes). */
function fieldChanges(input: TaskInput): repo.EditChanges {
  const changes: Record<string, unknown> = {};
  for (const [field, column] of INPUT_FIELD_COLUMNS)
    if (field !== 'parentId' && input[field] !== undefined) changes[column] = input[field];
  if (input.tags !== undefined) changes.tags = uniqueTags(input.tags);
  return changes;
}

/**
 * An edit whose rules do not depend on the stored task: something to write, no parentId, a
 * valid priority, no due time in the past (which is only allowed when it is the current one).
 */
function isPlainEdit(input: TaskInput): boolean {
  if (Object.keys(input).length === 0 || input.parentId !== undefined) return false;
  if (typeof input.priority === 'string' && !PRIORITIES.includes(input.priority)) return false;
  return !input.dueAt || dueAtMillis(input.dueAt)! >= Date.now() - LIMITS.pastDueGraceMs;
}

/** An updatedAt as the API writes it (an If-Match tag of another shape can match nothing). */
const VERSION = /^(\d{4})-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$/;

/**
 * Whether an If-Match tag can be a task's version: an `updatedAt` as the API writes it (UTC, at
 * most microseconds) that names an instant Postgres stores (from year 1; no February 30th, no
 * 24:00). Any other tag matches no task (412), and never reaches the database as a timestamp.
 * Date's own parse, checked by printing it back: the calendar check luxon made, 0.7 µs a tag
 * instead of 3.5 µs.
 */
function isVersion(tag: string): boolean {
  const match = VERSION.exec(tag);
  if (!match || match[1] === '0000') return false;
  const millis = Date.parse(tag);
  return !Number.isNaN(millis) && new Date(millis).toISOString().slice(0, 19) === tag.slice(0, 19);
}

/**
 * A plain edit in one UPDATE, If-Match included in its condition; only when nothing matched does
 * a second query tell a missing task (404) from a stale version (412), in that order.
 *
 * While the account has no subscriber to `task.updated` (most accounts), that UPDATE is the whole
 * request: one statement in its own transaction, with no event to record. Otherwise it matches
 * nothing and the edit runs in a transaction with its event.
 */
async function plainEdit(db: Db, ctx: Context, id: string, input: TaskInput, ifMatch?: IfMatch): Promise<Task> {
  const versions = ifMatch === undefined || ifMatch === '*' ? null : ifMatch.filter(isVersion);
  const changes = fieldChanges(input);
  const unobserved = await repo.updateLiveTask(db, ctx.workspaceId, id, changes, versions, {
    accountId: ctx.accountId,
    type: 'task.updated',
  });
  if (unobserved) return toTask(unobserved);
  const updated = await inTransaction(db, async (trx) => {
    // Locked first: the event's `previous` is the task this edit replaced.
    const before = await repo.findTask(trx, ctx.workspaceId, id, true);
    const row = await repo.updateLiveTask(trx, ctx.workspaceId, id, changes, versions);
    return row && emit(trx, ctx, 'task.updated', toTask(row), before);
  });
  if (updated) return updated;
  const task = await repo.findTask(db, ctx.workspaceId, id);
  if (!task || task.deleted_at !== null) throw notFound();
  throw errors.preconditionFailed();
}

/**
 * Soft-deletes a task and, with it, its subtasks; returns the deleted task. The rows stay as
 * tombstones for the changes feed; afterwards a bounded batch of this workspace's tombstones
 * older than any valid feed cursor needs (a day of margin for transactions in flight) is pruned.
 */
export async function deleteTask(db: Db, ctx: Context, id: string, ifMatch?: IfMatch): Promise<Task> {
  const deleted = await inTransaction(db, async (trx) => {
    const task = await findLive(trx, ctx, id, true);
    checkIfMatch(ifMatch, task);
    await repo.softDeleteSubtasks(trx, id);
    return emit(
      trx,
      ctx,
      'task.deleted',
      toTask(await repo.updateTask(trx, ctx.workspaceId, id, { deleted_at: 'now' })),
    );
  });
  await repo.pruneTombstones(db, ctx.workspaceId, LIMITS.tombstoneDays, LIMITS.tombstonePruneBatch);
  return deleted;
}

async function findForStateChange(trx: Db, ctx: Context, id: string, ifMatch?: IfMatch): Promise<TaskState> {
  const task = await repo.findTask(trx, ctx.workspaceId, id, true);
  if (!task) throw notFound();
  checkIfMatch(ifMatch, task);
  if (task.deleted_at !== null) throw fail('task_deleted', 'The task is deleted');
  return task;
}

/**
 * Completes an open task. A task with a recurrence also gets its next occurrence (returned as
 * `next`): the same fields, open, due at the rule's next occurrence after this due time (or, for
 * `every!` / `after`, after the completion; on the caller's wall clock), placed right after it in
 * the manual order, with its subtasks copied open and its relative reminders copied.
 */
export async function completeTask(
  db: Db,
  ctx: Context,
  id: string,
  ifMatch?: IfMatch,
): Promise<{ item: Task; next: Task | null }> {
  return inTransaction(db, async (trx) => {
    const task = await findForStateChange(trx, ctx, id, ifMatch);
    if (task.completed_at !== null) throw fail('task_already_completed', 'The task is already completed');
    const item = await emit(
      trx,
      ctx,
      'task.completed',
      toTask(await repo.updateTask(trx, ctx.workspaceId, id, { completed_at: 'now' })),
      task,
    );
    const rule = task.recurrence === null ? undefined : parseRecurrence(task.recurrence);
    if (!rule) return { item, next: null };

    const due = nextDue(rule, { dueAt: task.due_at, completedAt: item.completedAt!, zone: ctx.timezone });
    let position: ReturnType<typeof repo.positionBetween> | null = null;
    if (task.parent_id === null) {
      await repo.lockOrder(trx, ctx.workspaceId);
      position = repo.positionBetween(
        task.position,
        await repo.positionAfter(trx, ctx.workspaceId, task.position!, id),
      );
    }
    const [next] = await repo.insertTasks(trx, ctx.workspaceId, [{ ...repo.taskValues(task), due_at: due, position }]);
    // Its relative reminders go with it, before its own due time.
    await copyRelativeReminders(trx, id, next!.id);
    if (task.parent_id === null) {
      // Subtask due times keep their distance to the parent's (none when the parent had no due time).
      const shift = due === null || task.due_at === null ? null : dueAtMillis(due)! - dueAtMillis(task.due_at)!;
      const subtasks = await repo.listSubtasks(trx, id);
      await repo.insertTasks(
        trx,
        ctx.workspaceId,
        subtasks.map((s) => ({
          ...repo.taskValues(s),
          due_at: s.due_at === null || shift === null ? null : new Date(dueAtMillis(s.due_at)! + shift).toISOString(),
          parent_id: next!.id,
          position: null,
        })),
      );
    }
    return { item, next: toTask(next!) };
  });
}

/** Reopens a completed task. */
export async function reopenTask(db: Db, ctx: Context, id: string, ifMatch?: IfMatch): Promise<Task> {
  return inTransaction(db, async (trx) => {
    const task = await findForStateChange(trx, ctx, id, ifMatch);
    if (task.completed_at === null) throw fail('task_not_completed', 'The task is not completed');
    return emit(
      trx,
      ctx,
      'task.reopened',
      toTask(await repo.updateTask(trx, ctx.workspaceId, id, { completed_at: null })),
      task,
    );
  });
}

/**
 * Moves a top-level task right after `afterId` (null: to the top). Writes only the moved task,
 * and nothing at all when it is already there, so repeating a move changes nothing.
 */
export async function moveTask(db: Db, ctx: Context, id: string, afterId: string | null): Promise<Task> {
  return inTransaction(db, async (trx) => {
    const task = await findLive(trx, ctx, id, true);
    let after: TaskState | undefined;
    if (afterId !== null && afterId !== id) {
      after = await repo.findTask(trx, ctx.workspaceId, afterId);
      if (!after || after.deleted_at !== null || after.parent_id !== null)
        throw taskNotFound('afterId does not name a task in the manual order');
    }
    if (task.parent_id !== null)
      throw fail('not_top_level', 'Subtasks are ordered under their parent and cannot be moved');
    if (afterId === id)
      throw fail('after_self', 'A task cannot be placed after itself', {
        details: [{ path: '/afterId', message: 'names the task being moved' }],
      });
    await repo.lockOrder(trx, ctx.workspaceId);
    const current = task.position!;
    let before: string | null;
    let next: string | null;
    if (after === undefined) {
      before = null;
      next = await repo.firstPosition(trx, ctx.workspaceId, id);
    } else {
      before = after.position!;
      next = await repo.positionAfter(trx, ctx.workspaceId, before, id);
    }
    const inPlace = (before === null || isGreater(current, before)) && (next === null || isGreater(next, current));
    if (inPlace) return toTask(task);
    return emit(
      trx,
      ctx,
      'task.moved',
      toTask(await repo.updateTask(trx, ctx.workspaceId, id, { position: repo.positionBetween(before, next) })),
    );
  });
}

/** Exact comparison of two numeric texts (positions can carry more digits than a double holds). */
function isGreater(a: string, b: string): boolean {
  const [ai, af = ''] = a.split('.');
  const [bi, bf = ''] = b.split('.');
  const aNeg = ai!.startsWith('-');
  const bNeg = bi!.startsWith('-');
  if (aNeg !== bNeg) return bNeg;
  const magnitude = compareMagnitude(ai!.replace('-', ''), af, bi!.replace('-', ''), bf);
  return aNeg ? magnitude < 0 : magnitude > 0;
}

function compareMagnitude(ai: string, af: string, bi: string, bf: string): number {
  const intA = ai.replace(/^0+(?=\d)/, '');
  const intB = bi.replace(/^0+(?=\d)/, '');
  if (intA.length !== intB.length) return intA.length - intB.length;
  if (intA !== intB) return intA < intB ? -1 : 1;
  const len = Math.max(af.length, bf.length);
  const fa = af.padEnd(len, '0');
  const fb = bf.padEnd(len, '0');
  return fa === fb ? 0 : fa < fb ? -1 : 1;
}

/**
 * What a list page holds besides its items (`{"items":[],"nextCursor":"..."}`): the cursor is at
 * most 4,096 characters, as a request takes it back.
 */
export const LIST_ENVELOPE = 4096 + 64;

/**
 * A page of tasks: a search when `q` is set (view and tag ignored), else the view, with keyset
 * cursors. `startOfTomorrow` draws the line between today and upcoming (the app's cache of it).
 * The page is at most MAX_PAGE_BYTES of JSON: fewer items and a `nextCursor` beyond that.
 */
export async function listTasks(
  db: Db,
  ctx: Context,
  query: ListQuery,
  startOfTomorrow: StartOfTomorrow,
): Promise<{ items: (Task | TaskWithSubtasks)[]; nextCursor: string | null }> {
  const { limit } = query;
  if (query.q !== undefined) {
    const after = query.cursor === undefined ? null : searchCursor(query.cursor, query.q);
    const rows = await repo.searchPage(db, {
      workspaceId: ctx.workspaceId,
      q: query.q,
      after: after && { rank: after.r, id: after.i },
      limit: limit + 1,
      candidates: LIMITS.searchCandidates,
    });
    const { entries, last, hasMore } = pageWithin(rows, limit, toTask, LIST_ENVELOPE);
    return {
      items: entries,
      nextCursor:
        hasMore && last ? encodeCursor({ k: 'search', h: queryDigest(query.q), r: last.rank, i: last.id }) : null,
    };
  }

  const tag = query.tag ?? null;
  const after = query.cursor === undefined ? null : listCursor(query.cursor, query.view, tag);
  if (query.view === 'all') {
    const rows = await repo.listOrderedPage(db, {
      workspaceId: ctx.workspaceId,
      tag,
      afterPosition: after?.p ?? null,
      limit: limit + 1,
    });
    const { entries, last, hasMore } = pageWithin(
      rows,
      limit,
      (r) => withSubtasks(r, r.subtasks.map(toTask)),
      LIST_ENVELOPE,
    );
    return {
      items: entries,
      nextCursor: hasMore && last ? encodeCursor({ k: 'list', v: 'all', t: tag, p: last.position, i: last.id }) : null,
    };
  }

  const filter =
    query.view === 'completed'
      ? { completed: true as const }
      : query.view === 'today'
        ? { dueBefore: startOfTomorrow(ctx.timezone) }
        : { dueFrom: startOfTomorrow(ctx.timezone) };
  const rows = await repo.listCreatedPage(db, {
    workspaceId: ctx.workspaceId,
    filter,
    tag,
    after: after && { createdAt: after.c!, id: after.i },
    limit: limit + 1,
  });
  const { entries, last, hasMore } = pageWithin(rows, limit, toTask, LIST_ENVELOPE);
  return {
    items: entries,
    nextCursor:
      hasMore && last ? encodeCursor({ k: 'list', v: query.view, t: tag, c: last.created_at, i: last.id }) : null,
  };
}
