import type { Request, Router } from 'express';
import { callerTimezone } from '@app/auth/identity';
import { chargeRequests } from '@app/auth/runtime';
import { errorBody, errors, type AppError, recordId } from '@app/http-errors';
import { compileBody } from '@app/http-errors/validation';
import { batchSchema } from '../domain/batch.schemas.js';
import { runBatch, type BatchCalls, type BatchCommand } from '../domain/batch.service.js';
import { taskNotFound } from '../domain/errors.js';
import * as service from '../domain/tasks.service.js';
import {
  createBody,
  emptyBody,
  positionBody,
  readIfMatch,
  updateBody,
  type TasksRouteContext,
} from './tasks.routes.js';

const batchBody = compileBody(batchSchema);

/** A command's args without its `ifMatch`, and that `ifMatch` read as the If-Match header is (400 at /ifMatch). */
function splitIfMatch(args: Record<string, unknown> | undefined) {
  if (args === undefined || !('ifMatch' in args)) return { body: args, ifMatch: undefined };
  const { ifMatch, ...body } = args;
  if (typeof ifMatch !== 'string') throw errors.validation([{ path: '/ifMatch', message: 'must be a string' }]);
  return { body, ifMatch: readIfMatch(ifMatch, '/ifMatch') };
}

/** Each command as the single route it stands for: its body checked by that route's schema, then its service call. */
const single: BatchCalls['apply'] = async (trx, ctx, command: BatchCommand) => {
  if (command.type === 'add')
    return { status: 201, item: (await service.createTask(trx, ctx, createBody.parse(command.args))).item };
  if (command.type === 'move') {
    const { afterId } = positionBody.parse(command.args);
    const id = recordId(command.taskId, taskNotFound);
    return { status: 200, item: await service.moveTask(trx, ctx, id, afterId === null ? null : afterId.toLowerCase()) };
  }
  const { body, ifMatch } = splitIfMatch(command.args);
  if (command.type === 'update') {
    const input = updateBody.parse(body);
    return {
      status: 200,
      item: await service.updateTask(trx, ctx, recordId(command.taskId, taskNotFound), input, ifMatch),
    };
  }
  if (body !== undefined) emptyBody.parse(body);
  const id = recordId(command.taskId, taskNotFound);
  if (command.type === 'complete')
    return { status: 200, item: (await service.completeTask(trx, ctx, id, ifMatch)).item };
  if (command.type === 'reopen') return { status: 200, item: await service.reopenTask(trx, ctx, id, ifMatch) };
  return { status: 200, item: await service.deleteTask(trx, ctx, id, ifMatch) };
};

/** POST /api/v1/tasks/batch: the commands of an offline client, each as its single call. */
export function batchRoutes(router: Router, { db, caches }: TasksRouteContext): void {
  router.post('/tasks/batch', async (req: Request, res) => {
    const batch = batchBody.parse(req.body);
    // The request was counted once already: a batch counts as many requests as it has commands.
    await chargeRequests(req, batch.commands.length - 1);
    const ctx = {
      accountId: req.caller!.accountId,
      timezone: callerTimezone(req),
      workspaceId: await caches.workspaceOf(req.caller!.accountId),
    };
    const errorOf = (err: AppError) => errorBody('rich', err, req.id).error as Record<string, unknown>;
    res.json(await runBatch(db, ctx, batch, { apply: single, errorOf }));
  });
}
