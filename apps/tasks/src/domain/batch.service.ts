import { inTransaction } from '@app/auth/runtime';
import { WINDOW_ORIGIN } from '@app/auth/streams';
import { AppError, errors, type ErrorDetail, isUuid } from '@app/http-errors';
import { type Shape } from '@app/http-errors/validation';
import type { Kysely } from 'kysely';
import * as repo from '../db/batch.repository.js';
import type { Database } from '../db/schema.js';
import type { batchAnswerSchema, batchSchema } from './batch.schemas.js';
import { encodeCursor, queryDigest } from './cursor.js';
import { fail, taskNotFound } from './errors.js';
import type { Context, Task } from './tasks.service.js';

type Db = Kysely<Database>;

type Batch = Shape<typeof batchSchema>;
/** A command as the batch schema takes it. */
export type BatchCommand = Batch['commands'][number];
/** One command's result; `item` is a Task (the schema names it by reference). */
type BatchResult = Omit<Shape<typeof batchAnswerSchema>['results'][number], 'item'> & { item?: Task };
type BatchAnswer = Omit<Shape<typeof batchAnswerSchema>, 'results'> & { results: BatchResult[] };

/** What an applied command answered, as kept for 24 hours: its single call's status and task. */
interface Applied {
  status: number;
  item: Task;
}

/**
 * What the batch is given by the routes: `apply` makes a command's single call (its args checked
 * by that call's schema, then its service function) in the transaction it is given, with its
 * tempIds already replaced by ids; `errorOf` is the error object a single call would answer.
 */
export interface BatchCalls {
  apply(trx: Db, ctx: Context, command: BatchCommand): Promise<Applied>;
  errorOf(err: AppError): Record<string, unknown>;
}

/** Where the batch stands: the ids its adds named, and the last change it made. */
interface Progress {
  tempIds: Map<string, string>;
  last: repo.Stamp | undefined;
}

/**
 * What a batch cannot carry, whatever the tasks: a command id twice, a tempId twice or on
 * anything but an add, an add with a taskId, another command without one (400, every detail).
 */
function checkCommands(commands: readonly BatchCommand[]): void {
  const details: ErrorDetail[] = [];
  const ids = new Set<string>();
  const tempIds = new Set<string>();
  commands.forEach((c, i) => {
    const at = `/commands/${i}`;
    const id = c.id.toLowerCase();
    if (ids.has(id)) details.push({ path: `${at}/id`, message: 'repeats the id of an earlier command' });
    ids.add(id);
    if (c.type === 'add') {
      if (c.taskId !== undefined) details.push({ path: `${at}/taskId`, message: 'an add names no existing task' });
      if (c.tempId !== undefined && tempIds.has(c.tempId))
        details.push({ path: `${at}/tempId`, message: 'repeats the tempId of an earlier add' });
      if (c.tempId !== undefined) tempIds.add(c.tempId);
    } else {
      if (c.taskId === undefined) details.push({ path: `${at}/taskId`, message: `is required for ${c.type}` });
      if (c.tempId !== undefined) details.push({ path: `${at}/tempId`, message: 'only an add names a new task' });
    }
  });
  if (details.length > 0) throw errors.validation(details);
}

/**
 * A task reference as its id: the id of the earlier add that named it as its tempId, or the
 * value itself when it is a UUID. Anything else (a tempId no earlier add defined, or one whose
 * add failed) names no task: 404, as a single call's id that is no task.
 */
function taskRef(value: string, tempIds: Map<string, string>): string {
  const id = tempIds.get(value) ?? (isUuid(value) ? value.toLowerCase() : undefined);
  if (id !== undefined) return id;
  throw taskNotFound(`"${value}" is neither a task id nor the tempId of an earlier add of this batch`);
}

/** The command with its taskId, and its parentId (add, update) or afterId (move), as ids. */
function resolve(command: BatchCommand, tempIds: Map<string, string>): BatchCommand {
  const resolved = { ...command };
  if (command.taskId !== undefined) resolved.taskId = taskRef(command.taskId, tempIds);
  const field =
    command.type === 'move' ? 'afterId' : command.type === 'add' || command.type === 'update' ? 'parentId' : undefined;
  const ref = field && command.args?.[field];
  if (field && typeof ref === 'string') resolved.args = { ...command.args, [field]: taskRef(ref, tempIds) };
  return resolved;
}

/**
 * One command in `trx`: its first result when its id was applied within 24 hours, else its
 * single call, kept with its id. Notes the task an add named.
 */
async function runCommand(
  trx: Db,
  ctx: Context,
  command: BatchCommand,
  calls: BatchCalls,
  progress: Progress,
): Promise<BatchResult> {
  let applied: Applied;
  if (await repo.claimCommand(trx, ctx.accountId, command.id)) {
    applied = await calls.apply(trx, ctx, resolve(command, progress.tempIds));
    await repo.keepResult(trx, ctx.accountId, command.id, applied);
  } else {
    applied = (await repo.keptResult(trx, ctx.accountId, command.id)) as Applied;
  }
  if (command.type === 'add' && command.tempId !== undefined) progress.tempIds.set(command.tempId, applied.item.id);
  return { id: command.id, status: applied.status, item: applied.item };
}

/** Whether Postgres ended the transaction for a deadlock or a serialization failure: it changed nothing. */
function isConflict(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === '40P01' || code === '40001';
}

/** The existing tasks the commands name (taskId, parentId, afterId; not the tempIds of adds), once each. */
function namedTasks(commands: readonly BatchCommand[]): string[] {
  const refs = commands.flatMap((c) => [c.taskId, c.args?.parentId, c.args?.afterId]);
  return [
    ...new Set(
      refs.filter((ref): ref is string => typeof ref === 'string' && isUuid(ref)).map((id) => id.toLowerCase()),
    ),
  ];
}

/**
 * Runs the commands in one transaction; the first that fails undoes them all (409 `batch_failed`).
 * The tasks the commands name are locked first, in id order, so two atomic batches over the same
 * tasks in opposite order wait for each other instead of deadlocking (a CI run once saw one answer
 * 409 `concurrent_update`). A deadlock the commands' other locks still make (a workspace's order, a
 * parent's subtasks) ends one transaction: that one runs once more.
 */
async function runAtomic(db: Db, ctx: Context, batch: Batch, calls: BatchCalls, progress: Progress) {
  try {
    return await runAtomicOnce(db, ctx, batch, calls, progress);
  } catch (err) {
    if (!isConflict(err)) throw err;
    progress.tempIds.clear();
    progress.last = undefined;
    return runAtomicOnce(db, ctx, batch, calls, progress);
  }
}

async function runAtomicOnce(db: Db, ctx: Context, batch: Batch, calls: BatchCalls, progress: Progress) {
  return inTransaction(db, async (trx) => {
    await repo.lockTasks(trx, ctx.workspaceId, namedTasks(batch.commands));
    const results: BatchResult[] = [];
    for (const [index, command] of batch.commands.entries()) {
      try {
        results.push(await runCommand(trx, ctx, command, calls, progress));
      } catch (err) {
        if (!(err instanceof AppError) || err.status >= 500) throw err;
        throw fail('batch_failed', `Command ${index} failed (${err.code}); the batch changed nothing`, {
          extra: { details: { index, error: calls.errorOf(err) } },
        });
      }
    }
    progress.last = (await repo.lastStamp(trx, ctx.workspaceId)) ?? progress.last;
    return results;
  });
}

/** Runs each command in its own transaction; a failed one is its result and the rest still run. */
async function runEach(db: Db, ctx: Context, batch: Batch, calls: BatchCalls, progress: Progress) {
  const results: BatchResult[] = [];
  for (const command of batch.commands) {
    try {
      results.push(
        await inTransaction(db, async (trx) => {
          const result = await runCommand(trx, ctx, command, calls, progress);
          progress.last = (await repo.lastStamp(trx, ctx.workspaceId)) ?? progress.last;
          return result;
        }),
      );
    } catch (err) {
      if (!(err instanceof AppError) || err.status >= 500) throw err;
      results.push({ id: command.id, status: err.status, error: calls.errorOf(err) });
    }
  }
  return results;
}

/**
 * POST /api/v1/tasks/batch: the commands in order, each as its single call (its event included)
 * unless its id was applied for this account within 24 hours, which answers its first result.
 * Answers the results, the ids of the tempIds, and a changes-feed cursor just after the batch's
 * last change (where the feed stands now when it changed nothing).
 */
export async function runBatch(db: Db, ctx: Context, batch: Batch, calls: BatchCalls): Promise<BatchAnswer> {
  checkCommands(batch.commands);
  await repo.sweepCommands(db, batch.commands.length);
  const progress: Progress = { tempIds: new Map(), last: undefined };
  const results = await (batch.atomic ? runAtomic : runEach)(db, ctx, batch, calls, progress);
  const t = Math.floor(Date.now() / 1000);
  const w = queryDigest(ctx.workspaceId);
  let cursor: string;
  if (progress.last) {
    const { xid, id } = progress.last;
    cursor = encodeCursor({ k: 'changes', w, lo: xid, t, x: xid, i: id });
  } else {
    const horizon = await repo.feedHorizon(db);
    cursor = encodeCursor({ k: 'changes', w, lo: horizon, t, x: horizon, i: WINDOW_ORIGIN.i });
  }
  return { results, tempIds: Object.fromEntries(progress.tempIds), cursor };
}
