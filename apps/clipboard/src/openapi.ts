import { authOpenApiPaths } from '@app/auth/identity';
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
import { documentOutages, errorEnvelopeSchema } from '@app/http-errors';
import { bulkDeleteSchema, createItemSchema, favoriteBodySchema } from './domain/items.schemas.js';
import { settingsPatchSchema } from './domain/settings.schemas.js';
import { replaceSnippetsSchema, snippetInputSchema } from './domain/snippets.schemas.js';
import { syncBodySchema } from './domain/sync.schemas.js';
import { deleted, item, itemPaths, itemsPaths } from './openapi/items.js';
import { keyRecord, keysPaths } from './openapi/keys.js';
import { settings, settingsPaths } from './openapi/settings.js';
import { json, MAX_SNIPPETS, ref } from './openapi/shared.js';
import { snippet, snippetsPaths } from './openapi/snippets.js';
import { change, changePage, SYNC_PROTOCOL, syncPaths, syncResult } from './openapi/sync.js';
import { webhooks } from './openapi/webhooks.js';

/**
 * The clipboard service's OpenAPI 3.1 document, assembled from one file per resource under
 * openapi/ (keys, items, sync, snippets, settings; shared.ts holds what they share). The request
 * schemas come from domain/*.schemas.ts, the ones the routes compile for validation, so the
 * document and the checks cannot drift apart. test/openapi.test.ts holds the served document to test/fixtures/openapi.json.
 */
export {
  bulkDeleteSchema,
  clearHistoryQuerySchema,
  createItemSchema,
  favoriteBodySchema,
  listItemsQuerySchema,
} from './domain/items.schemas.js';
export { settingsPatchSchema } from './domain/settings.schemas.js';
export { replaceSnippetsSchema, snippetInputSchema } from './domain/snippets.schemas.js';
export { pullQuerySchema, syncBodySchema, syncFavoriteDataSchema, syncItemDataSchema } from './domain/sync.schemas.js';

export const openapiDocument = {
  openapi: '3.1.0',
  info: {
    title: 'Clipboard API',
    version: '1.0.0',
    license: openapiLicense,
    description: [
      'Clipboard history, snippets and settings of one account, reachable with scoped API keys (`Authorization: Bearer <key>`) or the browser session cookie `clipboard_sid`.',
      'Errors are `{ "error": "<message>" }`. 401: no valid key or session. 403: a key lacking the endpoint\'s scope, or a session call from a foreign Origin. 400: invalid body or query (unknown query parameters are ignored; unknown body fields are refused). 404: an unknown route, or an id that does not exist for this account (another account\'s record included; non-UUID ids too). 413: body over 1 MB. 429: more than RATE_LIMIT_PER_MINUTE (default 300) requests per minute per account, with `Retry-After`; back off exponentially.',
      servicePortRoutes,
      '',
      SYNC_PROTOCOL,
    ].join('\n\n'),
  },
  servers: openapiServers,
  tags: [
    { name: 'Clipboard', description: 'Clipboard history items' },
    { name: 'Sync', description: 'The sync protocol: pull changes after a cursor, push a batch of client changes' },
    { name: 'Snippets', description: 'Reusable text snippets' },
    { name: 'Settings', description: 'History limit, retention and capture preferences' },
    webhooks.tag,
    apiKeysTag,
  ],
  components: {
    securitySchemes: securitySchemes('clipboard', [
      'clipboard:read',
      'clipboard:write',
      'snippets:read',
      'snippets:write',
      'settings:read',
      'settings:write',
      'webhooks',
    ]),
    schemas: {
      Error: errorEnvelopeSchema('simple'),
      ...webhooks.schemas,
      Item: item,
      ItemList: {
        type: 'object',
        additionalProperties: false,
        required: ['items', 'hasMore'],
        properties: {
          items: { type: 'array', items: ref('Item') },
          hasMore: { type: 'boolean', description: 'More items exist after this page (no total is computed).' },
        },
      },
      CreateItem: createItemSchema,
      FavoriteBody: favoriteBodySchema,
      BulkDelete: bulkDeleteSchema,
      Deleted: deleted,
      Snippet: snippet,
      SnippetList: {
        type: 'object',
        additionalProperties: false,
        required: ['items'],
        properties: { items: { type: 'array', items: ref('Snippet'), maxItems: MAX_SNIPPETS } },
      },
      SnippetInput: snippetInputSchema,
      ReplaceSnippets: replaceSnippetsSchema,
      Settings: settings,
      SettingsPatch: settingsPatchSchema,
      Change: change,
      ChangePage: changePage,
      SyncRequest: syncBodySchema,
      SyncResult: syncResult,
      SyncResponse: {
        type: 'object',
        additionalProperties: false,
        required: ['results', 'changes', 'cursor', 'hasMore'],
        properties: { results: { type: 'array', items: ref('SyncResult') }, ...changePage.properties },
      },
      Key: keyRecord,
    },
    responses: {
      BadRequest: json(ref('Error'), 'Invalid JSON, body or query; the message names the field and the rule.'),
      Unauthorized: json(ref('Error'), 'No valid API key or session.'),
      Forbidden: json(
        ref('Error'),
        'The key lacks the scope, a key called a session-only route, or a session came from a foreign Origin.',
      ),
      NotFound: json(ref('Error'), 'No such record for this account (or a malformed id).'),
      Conflict: json(ref('Error'), 'A business rule refused the change (the message says which).'),
      Gone: json(
        ref('Error'),
        'The cursor is older than the retained change log (or not from this log): discard local state and resync without a cursor.',
      ),
      SearchTooExpensive: json(
        ref('Error'),
        'The text search was stopped after 1.5 s (its statement timeout): the items are too long for this text to be found in time. Retrying the same search does not help; search for a shorter or more distinctive text, or list without `q`.',
      ),
      TooLarge: json(ref('Error'), 'The body is over 1 MB.'),
      UnsupportedEncoding: json(ref('Error'), 'Unsupported content encoding or charset.'),
      RateLimited: {
        ...json(
          ref('Error'),
          'Rate limited (RATE_LIMIT_PER_MINUTE per account per minute, default 300); back off exponentially.',
        ),
        headers: { 'Retry-After': { schema: { type: 'integer' }, description: 'Seconds to wait.' } },
      },
      Internal: json(ref('Error'), 'Unexpected server fault (details are logged, never returned).'),
    },
  },
  security: [{ apiKey: [] }, { session: [] }],
  // Each event a subscription can receive, with its body's schema and an example.
  webhooks: webhooks.events,
  paths: {
    ...webhooks.paths,
    // Sign-up, login, logout and the account (shared by the three services, in this envelope).
    ...authOpenApiPaths('clipboard'),
    ...keysPaths,
    ...itemsPaths,
    ...syncPaths,
    ...itemPaths,
    ...snippetsPaths,
    ...settingsPaths,
  },
} as const;

// Every operation that needs the database documents its outage answer (503 with Retry-After).
documentOutages(openapiDocument);
// A key needs the scope of the resource the path names (/api/clipboard, /api/snippets, /api/settings):
// `:read` for GET, `:write` for everything else (the MCP tools follow this).
withApiKeyScopes(openapiDocument, (method, path) => [`${path.split('/')[2]}:${method === 'get' ? 'read' : 'write'}`]);
// ...and the rate-limit and CORS headers of every API answer.
// After the common headers: the gateway's 414 carries none of them.
documentUriLimit(documentCommonHeaders(openapiDocument));
