import { randomUUID } from 'node:crypto';
import { Router, type Request } from 'express';
import { AppError, errors, isUuid } from '@app/http-errors';
import { compileBody, compileQuery } from '@app/http-errors/validation';
import { eventBody, newEventId, type EventCatalog } from './events.js';
import * as repo from './repository.js';
import type { ChangedBy, SubscriptionRow } from './repository.js';
import {
  MAX_SUBSCRIPTIONS,
  createBodySchema,
  deliveriesQuerySchema,
  replayBodySchema,
  updateBodySchema,
} from './schemas.js';
import { newSigningSecret } from './signing.js';
import { openSecret, sealSecret, SecretUnreadableError, type SecretKeys } from './secret-box.js';
import { targetProblem } from './target.js';
import type { WebhookFilter } from './filter.js';
import { inTransaction, type AnyDb } from '../database/database.js';
import { activeTraceparent } from './trace-links.js';
import { sql } from 'kysely';

/** How long a rotated-out secret keeps signing beside the new one. */
const ROTATION_OVERLAP_MS = 24 * 3600_000;

/** The one place a subscription row becomes what the API returns (never its secrets); `filter` only where the service has one. */
function toSubscription(r: SubscriptionRow, filtered: boolean) {
  return {
    id: r.id,
    url: r.url,
    events: r.events,
    description: r.description,
    ...(filtered && { filter: r.filter }),
    enabled: r.enabled,
    disabledReason: r.disabled_reason,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

/**
 * How long a replay waits for a delivery turn under way: a turn sends for 2 s and its last POST
 * may take 10 s more (scheduler.ts, delivery.ts). Below the 30 s statement_timeout, so a lock held
 * longer (a stuck process) is this route's own 503, not the generic `query_timeout` after 30 s.
 */
const REPLAY_LOCK_WAIT = '15s';

/**
 * Makes a subscription's kept events from `since` on pending again (see repo.replayDeliveries),
 * holding the lock its delivery workers hold while they send: it waits for a turn under way to
 * end (at most {@link REPLAY_LOCK_WAIT}, else 503 `webhook_busy`), so none of them is in flight
 * meanwhile and nothing live overtakes them. 410 when `since` is gone.
 */
async function replayUnderLock(trx: AnyDb, service: string, subscriptionId: string, since: string): Promise<number> {
  await sql`set local lock_timeout = ${sql.lit(REPLAY_LOCK_WAIT)}`.execute(trx);
  try {
    await sql`select pg_advisory_xact_lock(hashtext(${`${service}.webhooks`}), hashtext(${subscriptionId}))`.execute(
      trx,
    );
  } catch (err) {
    // 55P03 lock_not_available: a 500 by the shared handler.
    if ((err as { code?: unknown }).code !== '55P03') throw err;
    throw new AppError(503, 'webhook_busy', 'A delivery of this subscription is under way; retry the replay', {
      headers: { 'Retry-After': '1' },
    });
  }
  const byId = since.startsWith('msg_');
  const n = await repo.replayDeliveries(trx, subscriptionId, byId ? { afterEventId: since } : { at: since });
  if (n === undefined)
    throw new AppError(
      410,
      'replay_gone',
      `No event ${byId ? `${since} of this subscription` : `since ${since}`} is kept: events are kept ${repo.HISTORY_DAYS} days`,
    );
  return n;
}

export interface WebhookRoutesOptions {
  db: AnyDb;
  /** The service's name: its delivery workers' lock namespace (`<service>.webhooks`). */
  service: string;
  catalog: EventCatalog;
  allowPrivate: boolean;
  /** Seal the signing secrets at rest (WEBHOOK_SECRET_KEY). */
  secretKeys: SecretKeys;
  /** The service's filter of events: its subscriptions then take `filter`. */
  filter?: WebhookFilter | undefined;
}

/**
 * What a subscription's routes read and show, by the service's catalog and whether it filters its
 * events: the create and PATCH bodies, the subscription as answered (`filter` where there is one),
 * and a body with its `filter` checked by the service (400 where it is unreadable; null clears it).
 */
function subscriptionShapes(o: WebhookRoutesOptions) {
  const names = Object.keys(o.catalog);
  return {
    createBody: compileBody(createBodySchema(names, o.filter?.field)),
    updateBody: compileBody(updateBodySchema(names, o.filter?.field)),
    shown: (r: SubscriptionRow) => toSubscription(r, o.filter !== undefined),
    checked: <B extends { filter?: string | null }>(body: B): B => {
      if (typeof body.filter === 'string') o.filter!.check(body.filter);
      return body;
    },
  };
}

/**
 * `/webhooks` of a service: create (secret shown once), list, get, update, delete, rotate the
 * secret, send a test ping, list the latest attempts. Mounted behind authentication and the
 * `webhooks` scope; every query is filtered by the caller's account (another's is 404).
 */
export function webhooksRouter(o: WebhookRoutesOptions): Router {
  const { createBody, updateBody, shown, checked } = subscriptionShapes(o);
  const deliveriesQuery = compileQuery(deliveriesQuerySchema);
  const replayBody = compileBody(replayBodySchema);
  const { db } = o;

  const checkTarget = async (url: string) => {
    const problem = await targetProblem(url, o.allowPrivate);
    if (problem) throw errors.validation([{ path: '/url', message: problem }]);
  };
  /**
   * The one check of every route that makes or changes a subscription (create, PATCH,
   * rotate-secret, replay): the caller must hold the read scope of every event
   * the subscription carries once changed (sessions hold every scope), else 403. It becomes the
   * subscription's last changer, whose scopes filter the deliveries from then on: the columns
   * returned here are written with the change. Deliveries follow those scopes whatever a
   * concurrent change did in between, so no row lock is needed for this check to hold.
   */
  const changedBy = (req: Request, events: readonly string[]): ChangedBy => {
    const caller = req.caller!;
    const missing = [...new Set(events.map((e) => o.catalog[e]!))].filter((s) => !caller.scopes.has(s));
    if (missing.length > 0)
      throw errors.forbidden('insufficient_scope', `This subscription's events need the scope ${missing.join(', ')}`);
    return { changed_by_kind: caller.oauth ? 'oauth' : caller.kind, changed_by_id: caller.credentialId };
  };
  const find = async (req: Request, lock = false, trx: AnyDb = db) => {
    const id = String(req.params.id);
    const row = isUuid(id) ? await repo.findSubscription(trx, req.caller!.accountId, id, lock) : undefined;
    if (!row) throw errors.notFound('Webhook subscription not found');
    return row;
  };

  const router = Router();
  router.post('/', async (req, res) => {
    const body = checked(createBody.parse(req.body ?? {}));
    const creator = changedBy(req, body.events);
    await checkTarget(body.url);
    const caller = req.caller!;
    if ((await repo.countSubscriptions(db, caller.accountId)) >= MAX_SUBSCRIPTIONS) {
      throw errors.conflict(
        'webhook_limit_reached',
        `An account can keep at most ${MAX_SUBSCRIPTIONS} webhook subscriptions`,
      );
    }
    const secret = newSigningSecret();
    // The id is chosen here: the sealed secret is bound to it.
    const id = randomUUID();
    const row = await repo.insertSubscription(db, {
      id,
      account_id: caller.accountId,
      creator_key_id: caller.kind === 'key' ? caller.credentialId : null,
      url: body.url,
      events: body.events,
      description: body.description ?? null,
      filter: body.filter ?? null,
      secret: sealSecret(o.secretKeys, id, 'secret', secret),
      ...creator,
    });
    res.status(201).json({ ...shown(row), secret, previousSecretExpiresAt: null });
  });
  router.get('/', async (req, res) => {
    res.json({ items: (await repo.listSubscriptions(db, req.caller!.accountId)).map(shown) });
  });
  router.get('/:id', async (req, res) => {
    res.json(shown(await find(req)));
  });
  router.patch('/:id', async (req, res) => {
    const body = checked(updateBody.parse(req.body ?? {}));
    const current = await find(req);
    // Any field: whoever changes it (re-points it, turns it back on) is who deliveries answer to.
    const changes: Record<string, unknown> = { ...changedBy(req, body.events ?? current.events) };
    if (body.url !== undefined) await checkTarget(body.url);
    if (body.url !== undefined) changes.url = body.url;
    if (body.events !== undefined) changes.events = body.events;
    if (body.description !== undefined) changes.description = body.description;
    if (body.filter !== undefined) changes.filter = body.filter;
    if (body.enabled !== undefined) {
      changes.enabled = body.enabled;
      changes.disabled_reason = null;
      changes.failing_since = null;
    }
    const row = await inTransaction(db, async (trx) => {
      const updated = await repo.updateSubscription(trx, req.caller!.accountId, String(req.params.id), changes);
      if (!updated) throw errors.notFound('Webhook subscription not found');
      // Turned off: what is still waiting is dropped with what will happen meanwhile.
      if (body.enabled === false) await repo.skipPending(trx, updated.id);
      return updated;
    });
    res.json(shown(row));
  });
  router.delete('/:id', async (req, res) => {
    const id = String(req.params.id);
    if (!isUuid(id) || !(await repo.deleteSubscription(db, req.caller!.accountId, id)))
      throw errors.notFound('Webhook subscription not found');
    res.status(204).end();
  });
  router.post('/:id/rotate-secret', async (req, res) => {
    const secret = newSigningSecret();
    const expires = new Date(Date.now() + ROTATION_OVERLAP_MS).toISOString();
    const row = await inTransaction(db, async (trx) => {
      const current = await find(req, true, trx);
      const rotatedBy = changedBy(req, current.events);
      // The outgoing secret keeps signing for a day, sealed for its new column. One this process
      // cannot read (its key is gone) could not sign anyway: the new secret alone then.
      let previous: string | null;
      try {
        previous = sealSecret(
          o.secretKeys,
          current.id,
          'previous_secret',
          openSecret(o.secretKeys, current.id, 'secret', current.secret),
        );
      } catch (err) {
        if (!(err instanceof SecretUnreadableError)) throw err;
        previous = null;
      }
      return (await repo.updateSubscription(trx, current.account_id, current.id, {
        secret: sealSecret(o.secretKeys, current.id, 'secret', secret),
        previous_secret: previous,
        previous_secret_expires_at: previous === null ? null : expires,
        ...rotatedBy,
      }))!;
    });
    res.json({ ...shown(row), secret, previousSecretExpiresAt: row.previous_secret_expires_at });
  });
  // A ping carries no data, only the subscription's id, and goes to the URL its last changer set:
  // it changes nothing, so the webhooks scope is enough (no read scope, no new changer).
  router.post('/:id/test', async (req, res) => {
    const sub = await find(req);
    if (!sub.enabled) throw errors.conflict('webhook_disabled', 'The subscription is disabled; enable it first');
    const eventId = newEventId();
    await inTransaction(db, (trx) =>
      repo.enqueueOne(trx, sub.id, eventId, 'ping', eventBody('ping', { subscriptionId: sub.id }), activeTraceparent()),
    );
    res.status(202).json({ eventId, type: 'ping' });
  });
  // Replay: the subscription's kept events from `since` on are made pending again, in their order
  // and with their ids, under the lock its delivery workers hold while they send (waiting for a
  // turn under way to end), so none of them is in flight meanwhile and nothing live overtakes them.
  router.post('/:id/replay', async (req, res) => {
    const { since } = replayBody.parse(req.body ?? {});
    const replayed = await inTransaction(db, async (trx) => {
      // Not locked before the delivery lock: a turn holding that lock may be writing this row.
      const sub = await find(req, false, trx);
      const replayedBy = changedBy(req, sub.events);
      if (!sub.enabled) throw errors.conflict('webhook_disabled', 'The subscription is disabled; enable it first');
      const n = await replayUnderLock(trx, o.service, sub.id, since);
      await repo.updateSubscription(trx, sub.account_id, sub.id, { ...replayedBy });
      return n;
    });
    res.status(202).json({ replayed });
  });
  router.get('/:id/deliveries', async (req, res) => {
    const query = deliveriesQuery.parse(req.query);
    const sub = await find(req);
    const rows = await repo.listAttempts(db, sub.id, query.limit);
    res.json({
      items: rows.map((r) => ({
        eventId: r.event_id,
        type: r.type,
        attempt: r.attempt,
        statusCode: r.status_code,
        ms: r.ms,
        error: r.error,
        nextAttemptAt: r.next_attempt_at,
        createdAt: r.created_at,
      })),
    });
  });
  return router;
}
