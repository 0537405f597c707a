import { Router } from 'express';
import type { AppDeps } from '../deps.js';
import * as syncing from '../domain/sync.service.js';
import { pullQuerySchema, syncBodySchema } from '../openapi.js';
import { bodyParser, queryParser } from '../validation.js';
import type { Guards } from './guards.js';

const pullQuery = queryParser<{ cursor?: string; limit: number }>(pullQuerySchema);
const syncBody = bodyParser<{ cursor?: string; limit?: number; changes: syncing.ClientChange[] }>(syncBodySchema);

/** The sync protocol: /api/clipboard/pull and /api/clipboard/sync (see the OpenAPI description). */
export function syncRoutes({ db }: AppDeps, g: Guards): Router {
  const router = Router();
  router.get('/clipboard/pull', g.read('clipboard:read'), async (req, res) => {
    res.json(await syncing.pull(db, req.caller!.accountId, req.caller!.scopes, pullQuery.parse(req.query)));
  });
  // Sync answers item contents (the server's changes), so it needs read as well as write.
  router.post('/clipboard/sync', g.read('clipboard:read'), g.write('clipboard:write'), async (req, res) => {
    const body = syncBody.parse(req.body);
    res.json(await syncing.sync(db, req.caller!.accountId, req.caller!.scopes, { ...body, limit: body.limit ?? 500 }));
  });
  return router;
}
