import { Router } from 'express';
import type { RouteContext } from '@app/auth/runtime';
import { publicOrigin } from '@app/auth/runtime';
import { checkTimezoneHeader, requireSession } from '@app/auth/identity';
import type { Database } from '../db/schema.js';
import { clientDocument, ConnectionsService, CONNECTION_PATHS } from '../domain/connections.service.js';
import { tasksUrlSetting } from '../domain/tasks-link.js';
import { account } from './http.js';

/** The account's connections to other services (DESIGN "Meetings: connected"): tasks, by its OAuth. */
export function connectionsRoutes(router: Router, { db, config }: RouteContext<Database>): void {
  const connections = new ConnectionsService(db, config.webhooks.secretKeys);
  const tasksUrl = tasksUrlSetting(process.env);
  const session = requireSession();

  router.get('/me/connections', session, async (req, res) => {
    res.json(await connections.status(account(req)));
  });
  router.get('/me/connections/tasks/start', session, async (req, res) => {
    const origin = publicOrigin(req, config.publicUrl);
    res.redirect(302, await connections.start(account(req), origin, tasksUrl ?? origin));
  });
  router.get('/me/connections/tasks/callback', session, async (req, res) => {
    const outcome = await connections.finish(account(req), req.query);
    res.redirect(302, `/account/meetings?tasks=${outcome}`);
  });
  router.delete('/me/connections/tasks', session, async (req, res) => {
    res.json(await connections.disconnect(account(req)));
  });
}

/** What needs no caller: the Client ID Metadata Document tasks fetches to learn who meetings is. */
export function connectionsPublicRoutes({ config }: Pick<RouteContext<Database>, 'config'>): Router {
  const router = Router();
  // X-Timezone is checked as on every API operation (a fetcher sends none).
  router.get(CONNECTION_PATHS.clientDocument.replace(/^\/api/, ''), checkTimezoneHeader(), (req, res) => {
    res.set('Cache-Control', 'public, max-age=3600');
    res.json(clientDocument(publicOrigin(req, config.publicUrl)));
  });
  return router;
}
