import type { Router } from 'express';
import type { RouteContext } from '@app/auth/runtime';
import type { Database } from '../db/schema.js';
import * as items from '../domain/items.service.js';
import { searchSlots } from '../domain/search-slots.js';
import {
  bulkDeleteSchema,
  clearHistoryQuerySchema,
  createItemSchema,
  favoriteBodySchema,
  listItemsQuerySchema,
} from '../openapi.js';
import { bodyParser, queryParser } from '../validation.js';

const listQuery = queryParser(listItemsQuerySchema);
const createBody = bodyParser(createItemSchema);
const favoriteBody = bodyParser(favoriteBodySchema);
const bulkBody = bodyParser(bulkDeleteSchema);
const clearQuery = queryParser(clearHistoryQuerySchema);

/** /api/clipboard: the history. */
export function clipboardRoutes(router: Router, ctx: RouteContext<Database>): void {
  const { db, guards: g } = ctx;
  const createItem = items.itemCreator(db);
  const searching = searchSlots(ctx);
  router.get('/clipboard', g.read('clipboard:read'), async (req, res) => {
    const { accountId } = req.caller!;
    const page = listQuery.parse(req.query);
    const list = () => items.listItems(db, accountId, page);
    res.json(await ((page.q ?? page.query) === undefined ? list() : searching(accountId, list)));
  });
  router.post('/clipboard', g.write('clipboard:write'), async (req, res) => {
    const { item, created } = await createItem(req.caller!.accountId, createBody.parse(req.body));
    res.status(created ? 201 : 200).json(item);
  });
  router.delete('/clipboard', g.write('clipboard:write'), async (req, res) => {
    res.json(await items.deleteNonFavorites(db, req.caller!.accountId, clearQuery.parse(req.query).before));
  });
  router.delete('/clipboard/bulk', g.write('clipboard:write'), async (req, res) => {
    res.json(await items.bulkDelete(db, req.caller!.accountId, bulkBody.parse(req.body).ids));
  });
  router.delete('/clipboard/:id', g.write('clipboard:write'), async (req, res) => {
    res.json(await items.deleteItem(db, req.caller!.accountId, req.params.id as string));
  });
  router.patch('/clipboard/:id/favorite', g.write('clipboard:write'), async (req, res) => {
    const { favorite } = favoriteBody.parse(req.body);
    res.json(await items.setFavorite(db, req.caller!.accountId, req.params.id as string, favorite));
  });
}
