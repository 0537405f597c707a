import type { Router } from 'express';
import type { RouteContext } from '@app/auth/runtime';
import { compileQuery } from '@app/http-errors/validation';
import type { Database } from '../db/schema.js';
import * as actions from '../domain/actions.service.js';
import * as search from '../domain/search.service.js';
import { actionsQuery, searchQuery } from '../openapi.js';
import { account, readsPrivate } from './http.js';

const listQuery = compileQuery(actionsQuery);
const findQuery = compileQuery(searchQuery);

/** GET /api/actions and GET /api/search: the cross-meeting reads. */
export function actionsRoutes(router: Router, { db }: RouteContext<Database>): void {
  router.get('/actions', async (req, res) => {
    res.json(await actions.listActions(db, account(req), listQuery.parse(req.query)));
  });
  router.get('/search', async (req, res) => {
    const q = findQuery.parse(req.query);
    res.json(await search.search(db, account(req), q, readsPrivate(req, q.includePrivate)));
  });
}
