import type { Router } from 'express';
import type { RouteContext } from '@app/auth/runtime';
import type { Database } from '../db/schema.js';
import * as settings from '../domain/settings.service.js';
import { settingsPatchSchema } from '../openapi.js';
import { bodyParser } from '../validation.js';

const patchBody = bodyParser(settingsPatchSchema);

/** /api/settings: read and partially update. */
export function settingsRoutes(router: Router, { db, guards: g }: RouteContext<Database>): void {
  router.get('/settings', g.read('settings:read'), async (req, res) => {
    res.json(await settings.getSettings(db, req.caller!.accountId));
  });
  router.put('/settings', g.write('settings:write'), async (req, res) => {
    res.json(await settings.updateSettings(db, req.caller!.accountId, patchBody.parse(req.body)));
  });
}
