import type { Router } from 'express';
import type { RouteContext } from '@app/auth/runtime';
import { callerTimezone } from '@app/auth/identity';
import { errors } from '@app/http-errors';
import type { Database } from '../db/schema.js';
import { findAccount } from '../db/locks.repository.js';
import { account } from './http.js';

/**
 * GET /api/me: the account behind the key or session, how the caller authenticated, and the
 * time zone in effect (X-Timezone when sent, else the account's).
 */
export function meRoutes(router: Router, { db }: RouteContext<Database>): void {
  router.get('/me', async (req, res) => {
    const timezone = callerTimezone(req);
    const row = await findAccount(db, account(req));
    if (!row) throw errors.unauthorized();
    res.json({
      accountId: row.id,
      email: row.email,
      timezone,
      authenticatedBy: req.caller!.kind,
      scopes: [...req.caller!.scopes].sort(),
    });
  });
}
