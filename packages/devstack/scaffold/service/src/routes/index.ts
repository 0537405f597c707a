import type { Request, Router } from 'express';
import { apiRouter, type RouteContext } from '@app/auth/runtime';
import { recordId } from '@app/http-errors';
import { compileBody, compileQuery } from '@app/http-errors/validation';
import type { Database } from '../db/schema.js';
import { notFound } from '../domain/errors.js';
import * as records from '../domain/__name__.service.js';
import { __resource__CreateBody, __resource__PatchBody, changesQuery, listQuery } from '../domain/__name__.schemas.js';

const createBody = compileBody(__resource__CreateBody);
const patchBody = compileBody(__resource__PatchBody);
const pageQuery = compileQuery(listQuery);
const feedQuery = compileQuery(changesQuery);

/** The caller's account id (the routes run behind authenticate). */
const account = (req: Request): string => req.caller!.accountId;

/** The `:id` path parameter; anything that is not a UUID names no record, so it is a 404. */
const pathId = (req: Request): string => recordId(req.params.id, notFound);

/**
 * The /api/__name__ routes: thin handlers, validated input -> one service call -> one response.
 * A routes module adds its routes to the service's one router; a second resource is a second
 * module (`xRoutes(router, ctx)`, in its own `x.routes.ts`) listed in {@link apiRoutes}.
 */
function __name__Routes(router: Router, { db, streams }: RouteContext<Database>): void {
  router.get('/__name__', async (req, res) => {
    res.json(await records.list__Title__(db, account(req), pageQuery.parse(req.query)));
  });
  router.post('/__name__', async (req, res) => {
    res.status(201).json(await records.create__Resource__(db, account(req), createBody.parse(req.body ?? {})));
  });
  // The feed and its stream before `/:id`, which would take `changes` for an id.
  router.get('/__name__/changes', async (req, res) => {
    res.json(await records.listChanges(db, account(req), feedQuery.parse(req.query)));
  });
  router.get(
    '/__name__/changes/stream',
    streams.route((req) => {
      // The hub takes the start point (cursor or Last-Event-ID); the query is checked here first.
      feedQuery.parse(req.query);
      const accountId = account(req);
      return {
        key: accountId,
        read: (cursor, limit) => records.readChanges(db, accountId, { cursor, limit }),
        // Every reader of the account's feed reads the same pages.
        shares: 'all',
        readMany: (cursors, limit) => records.readChangePages(db, accountId, cursors, limit),
      };
    }),
  );
  router.get('/__name__/:id', async (req, res) => {
    res.json(await records.get__Resource__(db, account(req), pathId(req)));
  });
  router.patch('/__name__/:id', async (req, res) => {
    const input = patchBody.parse(req.body ?? {});
    res.json(await records.update__Resource__(db, account(req), pathId(req), input));
  });
  router.delete('/__name__/:id', async (req, res) => {
    await records.delete__Resource__(db, account(req), pathId(req));
    res.status(204).end();
  });
}

/**
 * Every /api route of the __name__ service (keys and webhooks are mounted beside it), on one
 * router. No route checks a scope: app.ts's scopeByMethod has, before any of them runs (GET/HEAD
 * __name__:read, else __name__:write).
 */
export function apiRoutes(ctx: RouteContext<Database>): Router {
  return apiRouter(ctx, [__name__Routes]);
}
