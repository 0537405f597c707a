import type { Request, Response, Router } from 'express';
import { callerTimezone } from '@app/auth/identity';
import { errors, recordId } from '@app/http-errors';
import { compileBody, compileQuery } from '@app/http-errors/validation';
import type { RouteContext } from '@app/auth/runtime';
import type { Database } from '../db/schema.js';
import type { TaskCaches } from '../domain/caches.js';
import * as service from '../domain/tasks.service.js';
import type { Context, IfMatch, Task } from '../domain/tasks.service.js';
import { fingerprint, keyDigest, readIdempotencyKey } from '../idempotency.js';
import { listChanges, readChangePages, readChanges } from '../domain/changes.service.js';
import { previewRecurrence } from '../domain/recurrence.service.js';
import { announcedSince, streamEvent } from '../domain/reminders.jobs.js';
import { checkFilterAlone, listFilteredTasks } from '../domain/filter.service.js';
import { streamFilter } from '../domain/stream-filter.js';
import {
  IF_MATCH_MAX_LENGTH,
  changesQuerySchema,
  createTaskSchema,
  emptyBodySchema,
  listQuerySchema,
  positionSchema,
  previewQuerySchema,
  streamQuerySchema,
  updateTaskSchema,
} from '../openapi.js';
import { taskNotFound } from '../domain/errors.js';

// Compiled once; the batch route checks its commands' args with them too.
export const createBody = compileBody(createTaskSchema);
export const updateBody = compileBody(updateTaskSchema);
export const positionBody = compileBody(positionSchema);
export const emptyBody = compileBody(emptyBodySchema);
const listQuery = compileQuery(listQuerySchema);
const changesQuery = compileQuery(changesQuerySchema);
const streamQuery = compileQuery(streamQuerySchema);
const previewQuery = compileQuery(previewQuerySchema);

/** complete / reopen / auto-tag: no body, or `{}`. */
function noBody(req: Request): void {
  if (req.body !== undefined) emptyBody.parse(req.body);
}

/** A path id that is not a UUID names no task: 404, like a missing one. */
const taskId = (req: Request): string => recordId(req.params.id, taskNotFound);

/**
 * `If-Match`: `*` or a list of entity tags. Weak tags are kept out (If-Match compares strongly,
 * so they never match: 412); anything that is not an entity-tag list is 400 (at `path`: the
 * header, or a batch command's `ifMatch`).
 */
export function readIfMatch(header: string | undefined, path = 'If-Match'): IfMatch | undefined {
  if (header === undefined) return undefined;
  if (header.length > IF_MATCH_MAX_LENGTH)
    throw errors.validation([{ path, message: `must be at most ${IF_MATCH_MAX_LENGTH} characters` }]);
  if (header.trim() === '*') return '*';
  const strong: string[] = [];
  for (const part of header.split(',')) {
    const tag = /^\s*(W\/)?"([^"]*)"\s*$/.exec(part);
    if (!tag)
      throw errors.validation([{ path, message: 'must be * or a list of quoted entity tags (the ETag of the task)' }]);
    if (!tag[1]) strong.push(tag[2]!);
  }
  return strong;
}

function sendTask(res: Response, status: number, item: Task, extra: Record<string, unknown> = {}): void {
  res
    .set('ETag', `"${item.updatedAt}"`)
    .status(status)
    .json({ item, ...extra });
}

/** What the tasks routes are given: the shared route context and the app's caches (createApp makes them). */
export interface TasksRouteContext extends RouteContext<Database> {
  caches: TaskCaches;
}

/** The task routes under /api/v1: thin handlers, validated input -> one service call -> one response. */
export function tasksRoutes(router: Router, { db, streams, caches }: TasksRouteContext): void {
  const context = async (req: Request): Promise<Context> => ({
    accountId: req.caller!.accountId,
    timezone: callerTimezone(req),
    workspaceId: await caches.workspaceOf(req.caller!.accountId),
  });

  router.get('/tasks', async (req, res) => {
    const query = listQuery.parse(req.query);
    if (query.filter !== undefined) {
      checkFilterAlone(req.query);
      res.json(await listFilteredTasks(db, await context(req), { ...query, filter: query.filter }));
      return;
    }
    res.json(await service.listTasks(db, await context(req), query, caches.startOfTomorrow));
  });

  router.post('/tasks', async (req, res) => {
    const input = createBody.parse(req.body);
    const clientKey = readIdempotencyKey(req.get('idempotency-key'));
    const key =
      clientKey === undefined
        ? undefined
        : { accountId: req.caller!.accountId, keyHash: keyDigest(clientKey), fingerprint: fingerprint(input) };
    const { item, replayed } = await service.createTask(db, await context(req), input, key);
    if (replayed) res.set('Idempotent-Replayed', 'true');
    sendTask(res, 201, item);
  });

  // Before /tasks/:id, which would take "changes" for an id.
  router.get('/tasks/changes', async (req, res) => {
    const query = changesQuery.parse(req.query);
    res.json(await listChanges(db, await context(req), query));
  });

  // The same feed, pushed (Server-Sent Events): the hub reads it when a write to this workspace commits.
  router.get(
    '/tasks/changes/stream',
    streams.route(async (req) => {
      const { filter } = streamQuery.parse(req.query);
      const ctx = await context(req);
      const only = filter === undefined ? undefined : streamFilter(db, filter, ctx.timezone);
      return {
        key: ctx.workspaceId,
        read: async (cursor, limit) => {
          const page = await readChanges(db, ctx, { cursor, limit });
          return only ? only.page(page) : page;
        },
        // Unfiltered, the workspace's changes are the same for every member.
        ...(only ? {} : { shares: 'all', readMany: (cursors, limit) => readChangePages(db, ctx, cursors, limit) }),
        // reminder.fired and task.due, announced by the queue's jobs (DESIGN.md "Reminders").
        event: async (ref) => {
          const event = await streamEvent(db, ctx.workspaceId, ref);
          return only ? only.event(event) : event;
        },
        announcedSince: (since) => announcedSince(db, ctx.workspaceId, since),
      };
    }),
  );

  router.get('/recurrence/preview', async (req, res) => {
    const query = previewQuery.parse(req.query);
    res.json(previewRecurrence(query, callerTimezone(req)));
  });

  router.get('/tasks/:id', async (req, res) => {
    const ctx = await context(req);
    sendTask(res, 200, await service.getTask(db, ctx, taskId(req)));
  });

  router.patch('/tasks/:id', async (req, res) => {
    const input = updateBody.parse(req.body);
    const ifMatch = readIfMatch(req.get('if-match'));
    const ctx = await context(req);
    sendTask(res, 200, await service.updateTask(db, ctx, taskId(req), input, ifMatch));
  });

  router.delete('/tasks/:id', async (req, res) => {
    const ifMatch = readIfMatch(req.get('if-match'));
    const ctx = await context(req);
    sendTask(res, 200, await service.deleteTask(db, ctx, taskId(req), ifMatch));
  });

  router.post('/tasks/:id/complete', async (req, res) => {
    noBody(req);
    const ifMatch = readIfMatch(req.get('if-match'));
    const ctx = await context(req);
    const { item, next } = await service.completeTask(db, ctx, taskId(req), ifMatch);
    sendTask(res, 200, item, { next });
  });

  router.post('/tasks/:id/reopen', async (req, res) => {
    noBody(req);
    const ifMatch = readIfMatch(req.get('if-match'));
    const ctx = await context(req);
    sendTask(res, 200, await service.reopenTask(db, ctx, taskId(req), ifMatch));
  });

  router.post('/tasks/:id/auto-tag', async (req, res) => {
    noBody(req);
    const ctx = await context(req);
    sendTask(res, 200, await service.autoTag(db, ctx, taskId(req)), { tagged: false });
  });

  router.put('/tasks/:id/position', async (req, res) => {
    const { afterId } = positionBody.parse(req.body);
    const ctx = await context(req);
    sendTask(res, 200, await service.moveTask(db, ctx, taskId(req), afterId === null ? null : afterId.toLowerCase()));
  });
}
