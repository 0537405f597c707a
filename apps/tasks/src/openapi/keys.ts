import { createKeyBodySchema, keyIdParameter, keyLastUsedAtSchema } from '@app/auth/identity';
import { badBody, common, dateTime, err, json, ok, ref, tooLarge } from './shared.js';

// The account's API keys (session only).

export const keyProperties = {
  id: { type: 'string', format: 'uuid' },
  name: { type: ['string', 'null'] },
  prefix: { type: 'string' },
  scopes: { type: 'array', items: { type: 'string', enum: ['tasks:read', 'tasks:write', 'webhooks'] } },
  createdAt: dateTime,
  revokedAt: { ...dateTime, type: ['string', 'null'] },
  lastUsedAt: keyLastUsedAtSchema,
};

export const keysPaths = {
  '/api/v1/keys': {
    get: {
      operationId: 'listApiKeys',
      tags: ['API keys'],
      summary: "List the account's API keys (session only)",
      security: [{ session: [] }],
      responses: {
        '200': ok('keys, newest first, without secrets', {
          type: 'object',
          additionalProperties: false,
          required: ['items'],
          properties: { items: { type: 'array', items: ref('Key') } },
        }),
        ...common,
        '403': err('`session_required` (an API key) or `cross_origin`'),
      },
    },
    post: {
      operationId: 'createApiKey',
      tags: ['API keys'],
      summary: 'Create an API key (session only); the secret is shown once',
      security: [{ session: [] }],
      requestBody: {
        required: false,
        content: json(createKeyBodySchema),
      },
      responses: {
        '201': ok('the new key, with its secret', {
          type: 'object',
          additionalProperties: false,
          required: [...Object.keys(keyProperties), 'key'],
          properties: { ...keyProperties, key: { type: 'string' } },
        }),
        '400': badBody,
        ...common,
        '403': err('`session_required` (an API key) or `cross_origin`'),
        '413': tooLarge,
      },
    },
  },
  '/api/v1/keys/{id}': {
    delete: {
      operationId: 'revokeApiKey',
      tags: ['API keys'],
      summary: 'Revoke an API key (session only)',
      security: [{ session: [] }],
      parameters: [keyIdParameter],
      responses: {
        '200': ok('revoked', {
          type: 'object',
          additionalProperties: false,
          required: ['id', 'revoked'],
          properties: { id: { type: 'string' }, revoked: { const: true } },
        }),
        ...common,
        '403': err('`session_required` (an API key) or `cross_origin`'),
        '404': err('`not_found`: no such key of this account'),
      },
    },
  },
};
