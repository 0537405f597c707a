import { createKeyBodySchema, keyLastUsedAtSchema } from '@app/auth/identity';
import {
  bool,
  dateTime,
  json,
  noQuery,
  nullable,
  obj,
  op,
  optionalBody,
  params,
  ref,
  sessionOnly,
  str,
} from './shared.js';

// The caller's account and its API keys.

export const keySchema = obj({
  id: str,
  name: nullable(str),
  prefix: str,
  scopes: { type: 'array', items: str },
  createdAt: dateTime,
  revokedAt: nullable(dateTime),
  lastUsedAt: keyLastUsedAtSchema,
});

export const accountPaths = {
  '/api/me/keys': {
    get: op(
      'API keys',
      'listApiKeys',
      "List the account's API keys (browser sessions only; an API key gets 403 session_required)",
      { '200': json(obj({ items: { type: 'array', items: ref('ApiKey') } })) },
      {},
      sessionOnly,
    ),
    post: op(
      'API keys',
      'createApiKey',
      'Create an API key; the secret is shown once (browser sessions only)',
      {
        '201': json(
          { ...keySchema, required: [...keySchema.required, 'key'], properties: { ...keySchema.properties, key: str } },
          'Created',
        ),
      },
      {},
      { ...sessionOnly, ...optionalBody(createKeyBodySchema) },
    ),
  },
  '/api/me/keys/{id}': {
    delete: op(
      'API keys',
      'revokeApiKey',
      'Revoke an API key (browser sessions only)',
      { '200': json(obj({ id: str, revoked: bool })) },
      {},
      { ...sessionOnly, ...params(noQuery, ['id']) },
    ),
  },
  '/api/me': {
    get: op('Account', 'getMe', 'The account behind the key or session', {
      '200': json(
        obj({
          accountId: str,
          email: str,
          timezone: {
            type: 'string',
            description:
              "The X-Timezone header when sent (an unknown zone is 400 validation_failed), else the account's time zone",
          },
          authenticatedBy: { enum: ['key', 'session'] },
          scopes: { type: 'array', items: str, description: "The key's scopes; a session holds every scope" },
        }),
      ),
    }),
  },
};
