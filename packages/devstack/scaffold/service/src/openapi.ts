import { authOpenApiPaths, createKeyBodySchema, keyLastUsedAtSchema } from '@app/auth/identity';
import {
  apiKeysTag,
  documentCommonHeaders,
  documentUriLimit,
  openapiLicense,
  openapiServers,
  securitySchemes,
  servicePortRoutes,
  withApiKeyScopes,
} from '@app/auth/runtime';
import { streamOperation } from '@app/auth/streams';
import { webhookOpenApi } from '@app/auth/webhooks';
import { documentOutages, errorEnvelopeSchema } from '@app/http-errors';
import { uuidSchema } from '@app/http-errors/validation';
import { __resource__CreateBody, __resource__PatchBody, changesQuery, listQuery } from './domain/__name__.schemas.js';
import { __NAME___EVENTS } from './events.js';

/**
 * The __name__ service's OpenAPI 3.1 document: one resource, __resource__, with its changes feed,
 * stream and webhooks. The request schemas live in the domain (domain/__name__.schemas.ts), which
 * derives its types from them; the routes compile them (ajv, once at module load) and the
 * document embeds the very same objects, so validation and documentation cannot disagree. The MCP tools are made from this document by the runtime.
 */

const TAG = '__Title__';
const dateTime = { type: 'string', format: 'date-time', maxLength: 40 } as const;
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: object, description = 'OK') => ({ description, content: { 'application/json': { schema } } });
const error = (description: string) => json(ref('Error'), description);
const obj = (properties: Record<string, object>) => ({
  type: 'object',
  additionalProperties: false,
  required: Object.keys(properties),
  properties,
});

const __resource__Schema = obj({
  id: uuidSchema,
  title: { type: 'string', maxLength: 200 },
  url: { anyOf: [{ type: 'string', maxLength: 2000 }, { type: 'null' }] },
  createdAt: dateTime,
  updatedAt: dateTime,
});
const changeSchema = {
  oneOf: [
    obj({ type: { const: 'upsert' }, id: uuidSchema, item: ref('__Resource__') }),
    obj({ type: { const: 'delete' }, id: uuidSchema, item: { type: 'null' } }),
  ],
};

const common = {
  '400': error('Invalid input (validation_failed, invalid_json, invalid_cursor)'),
  '401': error('Missing, invalid or revoked key or session'),
  '403': error('Missing scope (insufficient_scope), or a session from a foreign Origin (cross_origin)'),
  '413': error('Body over 64 KB'),
  '429': error('Rate limited: 300 requests per account per minute; Retry-After says when to retry'),
};
const notFound = { '404': error('No such __resource__ for this account (a malformed id is also 404)') };
const cursorErrors = {
  '400': error("invalid_cursor (malformed, altered, or another account's cursor), validation_failed (limit)"),
  '410': error('cursor_expired: the cursor is older than 30 days; start a full sync without a cursor'),
};
const idParameter = { name: 'id', in: 'path', required: true, schema: { type: 'string', maxLength: 36 } };
const queryParameters = (query: { properties: Record<string, object> }) =>
  Object.entries(query.properties).map(([name, schema]) => ({ name, in: 'query', required: false, schema }));
const body = (schema: object) => ({ requestBody: { required: true, content: { 'application/json': { schema } } } });
const op = (
  operationId: string,
  summary: string,
  ok: Record<string, object>,
  more: object = {},
  extra: Record<string, object> = {},
) => ({
  operationId,
  tags: [TAG],
  summary,
  ...more,
  responses: { ...ok, ...common, ...extra },
});

const str = { type: 'string' } as const;
const keySchema = obj({
  id: str,
  name: { anyOf: [str, { type: 'null' }] },
  prefix: str,
  scopes: { type: 'array', items: str },
  createdAt: dateTime,
  revokedAt: { anyOf: [dateTime, { type: 'null' }] },
  lastUsedAt: keyLastUsedAtSchema,
});
/** The key routes take a browser session only (an API key is 403 session_required). */
const sessionOnly = { tags: ['API keys'], security: [{ session: [] }] };
const keysPaths = {
  '/api/__name__/keys': {
    get: op(
      'listApiKeys',
      "List the account's API keys (browser sessions only; an API key gets 403 session_required)",
      { '200': json(obj({ items: { type: 'array', items: ref('ApiKey') } })) },
      sessionOnly,
    ),
    post: op(
      'createApiKey',
      'Create an API key; the secret is shown once (browser sessions only)',
      {
        '201': json(
          { ...keySchema, required: [...keySchema.required, 'key'], properties: { ...keySchema.properties, key: str } },
          'Created',
        ),
      },
      {
        ...sessionOnly,
        requestBody: { required: false, content: { 'application/json': { schema: createKeyBodySchema } } },
      },
    ),
  },
  '/api/__name__/keys/{id}': {
    delete: op(
      'revokeApiKey',
      'Revoke an API key (browser sessions only)',
      { '200': json(obj({ id: str, revoked: { type: 'boolean' } })) },
      { ...sessionOnly, parameters: [idParameter] },
      notFound,
    ),
  },
};

/** The __resource__ each event's example shows, as the API returns it. */
const example__Resource__ = {
  id: '2b6c07ab-d2f0-4e0d-8cc2-f2be2fd9012d',
  title: 'An example __resource__',
  url: 'https://example.com/',
  createdAt: '2030-01-07T08:15:04.204113Z',
  updatedAt: '2030-01-07T08:15:04.204113Z',
};
const __resource__Ref = ref('__Resource__');

// Each event a subscription can receive: its `data` schema and one example (the document's `webhooks`).
const webhooks = webhookOpenApi('/api/__name__/webhooks', __NAME___EVENTS, {
  '__resource__.created': {
    summary: 'A __resource__ was created',
    data: __resource__Ref,
    example: { data: example__Resource__ },
  },
  '__resource__.updated': {
    summary: 'A __resource__ was changed',
    data: __resource__Ref,
    example: { data: { ...example__Resource__, title: 'A renamed __resource__', updatedAt: '2030-01-07T09:00:00.5Z' } },
  },
  '__resource__.deleted': {
    summary: 'A __resource__ was deleted',
    data: __resource__Ref,
    example: { data: example__Resource__ },
  },
});

export const openapiDocument = {
  openapi: '3.1.0',
  info: {
    title: '__Title__ API',
    version: '1.0.0',
    license: openapiLicense,
    description:
      '__Title__ (__resource__ records with a title and a url) for one account. Authenticate with `Authorization: Bearer <API key>` ' +
      '(scopes __name__:read for GET, __name__:write for everything else) or a `__name___sid` browser session. ' +
      'Errors: `{ error: { code, message, requestId, details? } }`. Ids are UUIDs; every record of another account is 404. ' +
      servicePortRoutes,
  },
  servers: openapiServers,
  security: [{ apiKey: [] }, { session: [] }],
  webhooks: webhooks.events,
  tags: [
    { name: TAG, description: "The account's __resource__ records" },
    { name: 'Sync', description: 'Every change of the account, as a resumable feed and as a live stream' },
    apiKeysTag,
    webhooks.tag,
  ],
  paths: {
    ...webhooks.paths,
    ...authOpenApiPaths('__name__'),
    ...keysPaths,
    '/api/__name__': {
      get: op(
        'list__Title__',
        'List __resource__ records (oldest first, keyset paged)',
        {
          '200': json({
            ...obj({
              items: { type: 'array', maxItems: 100, items: ref('__Resource__') },
              nextCursor: { anyOf: [{ type: 'string', maxLength: 200 }, { type: 'null' }] },
            }),
            description: 'Keyset page: pass nextCursor as cursor for the next one; null on the last page',
          }),
        },
        { parameters: queryParameters(listQuery) },
      ),
      post: op(
        'create__Resource__',
        'Create a __resource__',
        { '201': json(ref('__Resource__'), 'Created') },
        body(__resource__CreateBody),
      ),
    },
    '/api/__name__/{id}': {
      get: op(
        'get__Resource__',
        'Get a __resource__',
        { '200': json(ref('__Resource__')) },
        { parameters: [idParameter] },
        notFound,
      ),
      patch: op(
        'update__Resource__',
        'Update a __resource__ (title, url)',
        { '200': json(ref('__Resource__')) },
        { parameters: [idParameter], ...body(__resource__PatchBody) },
        notFound,
      ),
      delete: op(
        'delete__Resource__',
        'Delete a __resource__',
        { '204': { description: 'Deleted; no body' } },
        { parameters: [idParameter] },
        notFound,
      ),
    },
    '/api/__name__/changes': {
      get: {
        ...op(
          'list__Resource__Changes',
          'Sync: the __resource__ records changed since a cursor',
          {
            '200': json(
              obj({
                changes: { type: 'array', maxItems: 500, items: ref('Change') },
                nextCursor: { type: 'string', maxLength: 500 },
                hasMore: { type: 'boolean' },
              }),
            ),
          },
          {
            description:
              'Without a cursor a full sync starts: every __resource__ as an `upsert`. Then, with each `nextCursor`, every __resource__ changed since, once, in its latest state, in commit order; a deleted one is a `delete` with `item: null`. `hasMore: true`: call again now with `nextCursor`. Cursors are bound to your account and stay valid 30 days.',
            parameters: queryParameters(changesQuery),
          },
          cursorErrors,
        ),
        tags: ['Sync'],
      },
    },
    '/api/__name__/changes/stream': {
      get: streamOperation({
        operationId: 'stream__Resource__Changes',
        tags: ['Sync'],
        summary: 'Live: the changes feed pushed as Server-Sent Events',
        feed: 'GET /api/__name__/changes',
        change: ref('Change'),
        cursorMaxLength: 500,
        security: [{ apiKey: ['__name__:read'] }, { session: [] }],
        responses: {
          ...common,
          ...cursorErrors,
          '429': error(
            'too_many_streams: 10 streams of this account are open (Retry-After says when to try again), or a rate limit as on every request',
          ),
        },
      }),
    },
  },
  components: {
    securitySchemes: securitySchemes('__name__', ['__name__:read', '__name__:write', 'webhooks']),
    schemas: {
      ...webhooks.schemas,
      Error: errorEnvelopeSchema('rich'),
      ApiKey: keySchema,
      __Resource__: __resource__Schema,
      Change: changeSchema,
    },
  },
} as const;

// Every operation that needs the database documents its outage answer (503 with Retry-After).
documentOutages(openapiDocument);
// A key needs __name__:read for GET and __name__:write for everything else (the MCP tools follow this).
withApiKeyScopes(openapiDocument, (method) => [method === 'get' ? '__name__:read' : '__name__:write']);
// ...and the rate-limit and CORS headers of every API answer.
// After the common headers: the gateway's 414 carries none of them.
documentUriLimit(documentCommonHeaders(openapiDocument));
