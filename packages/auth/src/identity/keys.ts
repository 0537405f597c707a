import { Router } from 'express';
import { errors, isUuid } from '@app/http-errors';
import { compileBody, idPathParameter } from '@app/http-errors/validation';
import type { AuthConfig } from './config.js';
import { createApiKey } from './credentials.js';
import { forgetCredential } from './credential-cache.js';
import { authenticate, requireSession } from './middleware.js';
import * as repo from './repository.js';
import type { AnyDb } from './repository.js';

/** The body of `POST <keys path>`: compiled here once, and published in each OpenAPI document. */
export const createKeyBodySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 100 },
    scopes: {
      type: 'array',
      minItems: 1,
      maxItems: 20,
      items: { type: 'string', minLength: 1, maxLength: 50 },
      description: "The service's scopes (an unknown one is 400); default: every scope",
    },
  },
} as const;

/** The key id in `DELETE <keys path>/{id}`: a UUID; anything else is 404. */
export const keyIdParameter = idPathParameter('The key id (a UUID; anything else is 404)');

const createKeyBody = compileBody(createKeyBodySchema);

/**
 * The session-only key management routes, mounted at the service's keys path:
 * `GET /` lists the account's keys, `POST /` creates one (201, secret shown once),
 * `DELETE /:id` revokes one. An API key calling any of them gets 403.
 */
export function keysRouter(db: AnyDb, cfg: AuthConfig): Router {
  const router = Router();
  router.use(authenticate(cfg), requireSession());
  router.get('/', async (req, res) => {
    res.json({ items: await repo.listKeys(db, req.caller!.accountId) });
  });
  router.post('/', async (req, res) => {
    const body = createKeyBody.parse(req.body ?? {});
    const created = await createApiKey(db, cfg, {
      accountId: req.caller!.accountId,
      scopes: body.scopes,
      name: body.name,
    });
    res.status(201).json(created);
  });
  router.delete('/:id', async (req, res) => {
    const id = req.params.id;
    const revoked = isUuid(id) ? await repo.revokeKey(db, id, req.caller!.accountId) : undefined;
    if (!revoked) throw errors.notFound('API key not found');
    forgetCredential(revoked.id);
    res.json({ id: revoked.id, revoked: true });
  });
  return router;
}
