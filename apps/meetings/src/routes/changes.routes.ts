import type { Router } from 'express';
import type { RouteContext } from '@app/auth/runtime';
import { compileQuery } from '@app/http-errors/validation';
import type { Database } from '../db/schema.js';
import { listChanges, readChangePages, readChanges } from '../domain/changes.service.js';
import { changesQuery } from '../openapi.js';
import { account, readsPrivate } from './http.js';

const query = compileQuery(changesQuery);

/** GET /api/changes (the sync feed) and GET /api/changes/stream (the same feed, pushed as it commits). */
export function changesRoutes(router: Router, { db, streams }: RouteContext<Database>): void {
  router.get('/changes', async (req, res) => {
    const q = query.parse(req.query);
    res.json(await listChanges(db, account(req), q, readsPrivate(req, q.includePrivate)));
  });
  router.get(
    '/changes/stream',
    streams.route((req) => {
      // The hub takes the start point (cursor or Last-Event-ID); the query is checked here first.
      const { includePrivate } = query.parse(req.query);
      const accountId = account(req);
      const withPrivate = readsPrivate(req, includePrivate);
      return {
        key: accountId,
        read: (cursor, limit) => readChanges(db, accountId, { cursor, limit }, withPrivate),
        shares: withPrivate ? 'private' : 'shared',
        readMany: (cursors, limit) => readChangePages(db, accountId, cursors, limit, withPrivate),
      };
    }),
  );
}
