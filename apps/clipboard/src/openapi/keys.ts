import { createKeyBodySchema, keyIdParameter, keyLastUsedAtSchema } from '@app/auth/identity';
import { body, common, json, ref, resp, timestamp, withBody } from './shared.js';

// The account's API keys (browser sessions only).

export const keyRecord = {
  type: 'object',
  required: ['id', 'name', 'prefix', 'scopes', 'createdAt', 'revokedAt', 'lastUsedAt'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    name: { type: ['string', 'null'] },
    prefix: { type: 'string' },
    scopes: { type: 'array', items: { type: 'string' } },
    createdAt: timestamp,
    revokedAt: { type: ['string', 'null'] },
    lastUsedAt: keyLastUsedAtSchema,
    key: { type: 'string', description: 'Only in the answer to POST: the secret, shown once.' },
  },
} as const;

export const keysPaths = {
  '/api/settings/keys': {
    get: {
      operationId: 'listApiKeys',
      tags: ['API keys'],
      summary: "List the account's API keys (browser session only; an API key gets 403)",
      security: [{ session: [] }],
      responses: {
        200: json(
          { type: 'object', required: ['items'], properties: { items: { type: 'array', items: ref('Key') } } },
          'Keys without secrets',
        ),
        ...common,
      },
    },
    post: {
      operationId: 'createApiKey',
      tags: ['API keys'],
      summary: 'Create an API key (browser session only); the secret is in this answer only',
      security: [{ session: [] }],
      requestBody: body(createKeyBodySchema, false),
      responses: { 201: json(ref('Key'), 'Created'), ...withBody },
    },
  },
  '/api/settings/keys/{id}': {
    delete: {
      operationId: 'revokeApiKey',
      tags: ['API keys'],
      summary: 'Revoke an API key (browser session only)',
      security: [{ session: [] }],
      parameters: [keyIdParameter],
      responses: {
        200: json(
          {
            type: 'object',
            required: ['id', 'revoked'],
            properties: { id: { type: 'string' }, revoked: { const: true } },
          },
          'Revoked',
        ),
        404: resp('NotFound'),
        ...common,
      },
    },
  },
};
