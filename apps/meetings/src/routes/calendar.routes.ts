import { createHash } from 'node:crypto';
import { Router } from 'express';
import type { RouteContext } from '@app/auth/runtime';
import { checkTimezoneHeader, publicOrigin } from '@app/auth/identity';
import type { Database } from '../db/schema.js';
import * as calendar from '../domain/calendar.service.js';
import { fail } from '../domain/errors.js';
import { account } from './http.js';

/** The address of a calendar feed (session, or a key with meetings:read: app.ts lets its writes pass with that scope). */
export function calendarRoutes(router: Router, { db, config }: RouteContext<Database>): void {
  router.post('/me/calendar-feed', async (req, res) => {
    const token = await calendar.createFeed(db, account(req));
    res.status(201).json({ url: `${publicOrigin(req, config.publicUrl)}${calendar.feedPath(token)}` });
  });
  router.delete('/me/calendar-feed', async (req, res) => {
    await calendar.removeFeed(db, account(req));
    res.status(204).end();
  });
}

/**
 * GET /api/calendar/<token>.ics, with no credentials: the token is the secret. The ETag is the
 * body's hash; a matching If-None-Match is a 304 without a body.
 */
export function calendarFeedRouter({ db, config }: RouteContext<Database>): Router {
  const router = Router();
  // No credentials (calendar apps send none), but an X-Timezone sent is checked as on every API path.
  router.get('/calendar/:file', checkTimezoneHeader(), async (req, res) => {
    const { file } = req.params as { file: string };
    if (!file.endsWith('.ics')) throw fail('not_found', 'Calendar feed not found');
    const body = await calendar.renderFeed(db, file.slice(0, -4), publicOrigin(req, config.publicUrl));
    const etag = `"${createHash('sha256').update(body).digest('base64url')}"`;
    res.set({ ETag: etag, 'Cache-Control': 'private, no-cache' });
    const given = req.get('if-none-match');
    if (given !== undefined && given.split(',').some((t) => t.trim().replace(/^W\//, '') === etag)) {
      res.status(304).end();
      return;
    }
    res.type('text/calendar; charset=utf-8').send(body);
  });
  return router;
}
