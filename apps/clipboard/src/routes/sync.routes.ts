import type { Router } from 'express';
import type { RouteContext } from '@app/auth/runtime';
import type { Database } from '../db/schema.js';
import { assistantView } from '../domain/mappers.js';
import * as syncing from '../domain/sync.service.js';
import {
  pullQuerySchema,
  settingsPatchSchema,
  snippetInputSchema,
  syncBodySchema,
  syncFavoriteDataSchema,
  syncItemDataSchema,
} from '../openapi.js';
import { bodyParser, partParser, queryParser } from '../validation.js';

const pullQuery = queryParser(pullQuerySchema);
const syncBody = bodyParser(syncBodySchema);
// Not annotated: a contextual type would make the checker infer each schema back from its parser's type.
const changeData = {
  item: partParser(syncItemDataSchema),
  favorite: partParser(syncFavoriteDataSchema),
  snippet: partParser(snippetInputSchema),
  settings: partParser(settingsPatchSchema),
};

/** The sync protocol: /api/clipboard/pull and /api/clipboard/sync (see the OpenAPI description). */
export function syncRoutes(router: Router, { db, guards: g, streams }: RouteContext<Database>): void {
  router.get('/clipboard/pull', g.read('clipboard:read'), async (req, res) => {
    res.json(await syncing.pull(db, req.caller!.accountId, req.caller!.scopes, pullQuery.parse(req.query)));
  });
  // The pull feed pushed as it commits: the same cursor, scopes and changes.
  router.get(
    '/clipboard/pull/stream',
    g.read('clipboard:read'),
    streams.route((req) => {
      const { accountId, scopes, oauth } = req.caller!;
      let checked = false;
      return {
        key: accountId,
        read: async (cursor, limit) => {
          const page = await syncing.pullStreamPage(db, accountId, scopes, cursor, limit, checked);
          checked = true;
          // An OAuth caller's stream shows items as its other answers do (routes/index.ts).
          return oauth ? { ...page, changes: assistantView(page.changes) as unknown[] } : page;
        },
        // What the pages hold: the entities the scopes read, as the caller's kind sees them.
        shares: `${[...scopes].sort().join(' ')}${oauth ? ' (assistant)' : ''}`,
      };
    }),
  );
  // Sync answers item contents (the server's changes), so it needs read as well as write.
  router.post('/clipboard/sync', g.read('clipboard:read'), g.write('clipboard:write'), async (req, res) => {
    const body = syncBody.parse(req.body);
    res.json(
      await syncing.sync(
        db,
        req.caller!.accountId,
        req.caller!.scopes,
        { ...body, limit: body.limit ?? 500 },
        changeData,
      ),
    );
  });
}
