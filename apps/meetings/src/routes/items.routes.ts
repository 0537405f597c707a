import type { Router } from 'express';
import { publicOrigin, type RouteContext } from '@app/auth/runtime';
import { compileBody } from '@app/http-errors/validation';
import type { Database } from '../db/schema.js';
import * as carry from '../domain/carry.service.js';
import { ConnectionsService } from '../domain/connections.service.js';
import * as items from '../domain/items.service.js';
import { sendToTasks } from '../domain/send-to-tasks.service.js';
import { carryItemBody, itemPatchBody, reorderBody } from '../openapi.js';
import { account, pathId } from './http.js';

const patchBody = compileBody(itemPatchBody);
const carryBody = compileBody(carryItemBody);
const orderBody = compileBody(reorderBody);

export function itemsRoutes(router: Router, { db, config }: RouteContext<Database>): void {
  const connections = new ConnectionsService(db, config.webhooks.secretKeys);
  // Registered before /items/:id so "reorder" is never taken for an id.
  router.post('/items/reorder', async (req, res) => {
    const input = orderBody.parse(req.body ?? {});
    res.json(await items.reorderItems(db, account(req), input.meetingId, input.itemIds));
  });
  router.patch('/items/:id', async (req, res) => {
    const input = patchBody.parse(req.body ?? {});
    res.json(await items.updateItem(db, account(req), pathId(req, 'Item'), input));
  });
  router.delete('/items/:id', async (req, res) => {
    await items.deleteItem(db, account(req), pathId(req, 'Item'));
    res.status(204).end();
  });
  router.post('/items/:id/carry', async (req, res) => {
    const input = carryBody.parse(req.body ?? {});
    res.json(await carry.carryItem(db, account(req), pathId(req, 'Item'), input));
  });
  router.post('/items/:id/send-to-tasks', async (req, res) => {
    // The meetings account's own zone (not X-Timezone): the task is due on the action's day there.
    const ctx = {
      accountId: account(req),
      timezone: req.caller?.timezone ?? 'UTC',
      origin: publicOrigin(req, config.publicUrl),
    };
    res.json(await sendToTasks(db, connections, ctx, pathId(req, 'Item')));
  });
}
