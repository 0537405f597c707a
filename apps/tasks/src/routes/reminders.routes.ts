import type { Request, Router } from 'express';
import { callerTimezone } from '@app/auth/identity';
import { recordId } from '@app/http-errors';
import { compileBody } from '@app/http-errors/validation';
import * as service from '../domain/reminders.service.js';
import type { Context } from '../domain/tasks.service.js';
import { fail, taskNotFound } from '../domain/errors.js';
import { createReminderSchema } from '../openapi.js';
import type { TasksRouteContext } from './tasks.routes.js';

const createBody = compileBody(createReminderSchema);

const taskId = (req: Request): string => recordId(req.params.id, taskNotFound);
const reminderId = (req: Request): string =>
  recordId(req.params.reminderId, () => fail('not_found', 'Reminder not found'));

/** A task's reminders under /api/v1/tasks/:id/reminders: thin handlers, one service call each. */
export function remindersRoutes(router: Router, { db, caches }: TasksRouteContext): void {
  const context = async (req: Request): Promise<Context> => ({
    accountId: req.caller!.accountId,
    timezone: callerTimezone(req),
    workspaceId: await caches.workspaceOf(req.caller!.accountId),
  });

  router.get('/tasks/:id/reminders', async (req, res) => {
    res.json({ items: await service.listReminders(db, await context(req), taskId(req)) });
  });

  router.post('/tasks/:id/reminders', async (req, res) => {
    const input = createBody.parse(req.body);
    res.status(201).json(await service.createReminder(db, await context(req), taskId(req), input));
  });

  router.delete('/tasks/:id/reminders/:reminderId', async (req, res) => {
    await service.deleteReminder(db, await context(req), taskId(req), reminderId(req));
    res.status(204).end();
  });
}
