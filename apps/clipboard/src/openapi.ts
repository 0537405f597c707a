import { authOpenApiPaths, createKeyBodySchema, keyIdParameter, keyLastUsedAtSchema } from '@app/auth/identity';
import { apiKeysTag, documentCommonHeaders, withApiKeyScopes, openapiLicense, openapiServers, operationalPaths, operationsTag, securitySchemes } from '@app/auth/runtime';
import { streamOperation } from '@app/auth/streams';
import { webhookOpenApi } from '@app/auth/webhooks';
import { documentOutages, errorEnvelopeSchema } from '@app/http-errors';
import { idPathParameter, uuidSchema } from '@app/http-errors/validation';
/**
 * The clipboard service's OpenAPI 3.1 document. The request schemas below are the ones the
 * routes compile for validation, so the document and the checks cannot drift apart.
 */

import { CLIPBOARD_EVENTS } from './domain/events.js';

const ITEM_TYPES = ['text', 'url', 'html', 'rtf', 'code'] as const;
const MAX_ITEM_CONTENT = 131_072;
export const MAX_SNIPPETS = 200;
const MAX_SNIPPET_CONTENT = 20_000;
const MAX_BULK_IDS = 500;
const MAX_SYNC_CHANGES = 500;
export const TOMBSTONE_DAYS = 30;

const uuid = uuidSchema;
const timestamp = { type: 'string', description: 'UTC instant, ISO 8601 with microseconds, e.g. 2026-11-22T10:00:00.123456Z' } as const;

const itemType = {
  type: 'string',
  enum: ITEM_TYPES,
  description: 'Kind of textual content. `url` content must be an absolute URL (scheme:...). Binary content such as images is not stored by this service.',
} as const;
const itemContent = {
  type: 'string',
  minLength: 1,
  maxLength: MAX_ITEM_CONTENT,
  description: `1 to ${MAX_ITEM_CONTENT} characters (Unicode code points), stored exactly as sent (whitespace kept). NUL (U+0000) is refused with 400.`,
} as const;
const itemSource = {
  type: 'string',
  maxLength: 64,
  pattern: '^[a-z0-9][a-z0-9._-]{0,63}$',
  description: 'Where the content was copied: a lower-case token of 1 to 64 characters [a-z0-9._-], e.g. `api` (API clients), `desktop`, `mobile`, `browser`, `cli`.',
  examples: ['api'],
} as const;

export const createItemSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['type', 'content', 'source'],
  properties: { type: itemType, content: itemContent, source: itemSource },
} as const;

export const favoriteBodySchema = {
  type: 'object',
  additionalProperties: false,
  description: 'Optional. Without a body (or with `{}`) the flag is toggled; `{"favorite": true|false}` sets it explicitly, which is safe to retry.',
  properties: { favorite: { type: 'boolean' } },
} as const;

export const bulkDeleteSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['ids'],
  properties: {
    ids: {
      type: 'array',
      minItems: 1,
      maxItems: MAX_BULK_IDS,
      items: uuid,
      description: `1 to ${MAX_BULK_IDS} item ids. Repeated ids count once; ids that do not exist or belong to another account are skipped silently (they are not counted).`,
    },
  },
} as const;

export const listItemsQuerySchema = {
  type: 'object',
  properties: {
    limit: { type: 'integer', minimum: 1, maximum: 500, default: 50 },
    offset: { type: 'integer', minimum: 0, maximum: 100_000, default: 0 },
    favorite: { type: 'boolean', description: '`true`: only favorites; `false`: only non-favorites; absent: all.' },
  },
} as const;

const snippetName = { type: 'string', minLength: 1, maxLength: 100, pattern: '\\S', description: '1 to 100 characters, not only whitespace.' } as const;
const snippetContent = { type: 'string', minLength: 1, maxLength: MAX_SNIPPET_CONTENT, description: `1 to ${MAX_SNIPPET_CONTENT} characters.` } as const;
const snippetKeyword = {
  type: ['string', 'null'],
  maxLength: 32,
  pattern: '^[A-Za-z0-9_-]{1,32}$',
  description: 'Optional abbreviation that expands to the snippet: 1 to 32 characters [A-Za-z0-9_-], unique per account ignoring case (a duplicate is 409). null or absent: no keyword.',
} as const;

export const snippetInputSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'content'],
  properties: { name: snippetName, content: snippetContent, keyword: snippetKeyword },
} as const;

export const replaceSnippetsSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['items'],
  properties: {
    items: {
      type: 'array',
      maxItems: MAX_SNIPPETS,
      description: `The complete new set, 0 to ${MAX_SNIPPETS} snippets (more is 400 and nothing changes). An \`id\` naming one of your snippets keeps that snippet (same id and createdAt; updatedAt changes only if a field changed); any other \`id\` is ignored and a new id is assigned. Snippets left out are deleted. Ids repeated in the set and keywords repeated in the set (ignoring case) are 400.`,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['name', 'content'],
        properties: { id: uuid, name: snippetName, content: snippetContent, keyword: snippetKeyword },
      },
    },
  },
} as const;

export const settingsPatchSchema = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  description: 'Partial update: only the fields sent change. Unknown fields and an empty object are 400.',
  properties: {
    historyLimit: {
      type: 'integer',
      format: 'int32',
      minimum: 10,
      maximum: 100_000,
      description: 'How many non-favorite items are kept (default 1000). Favorites never count and are never pruned. Enforced when an item is added and when the limit is lowered (the oldest non-favorites beyond it are deleted at once).',
    },
    retentionDays: {
      type: 'integer',
      format: 'int32',
      minimum: 0,
      maximum: 3650,
      description: '0 (default): keep forever. Otherwise non-favorite items older than this many days are no longer listed and are deleted on the next write (an item added, or this setting changed).',
    },
    captureEnabled: { type: 'boolean', description: 'Client preference (default true): whether desktop and mobile clients capture the clipboard. The server stores and syncs it; API creates are not affected.' },
  },
} as const;

export const pullQuerySchema = {
  type: 'object',
  properties: {
    cursor: { type: 'string', maxLength: 200, description: 'Opaque cursor from a previous pull or sync. Absent or empty: from the beginning of the retained log.' },
    limit: { type: 'integer', minimum: 1, maximum: 1000, default: 500 },
  },
} as const;

const SYNC_ENTITIES = ['item', 'snippet', 'settings'] as const;
const SYNC_OPS = ['upsert', 'delete', 'favorite'] as const;

export const syncBodySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['changes'],
  properties: {
    cursor: { type: 'string', maxLength: 200, description: 'The cursor the client last received; the answer carries the changes after it. Absent: from the beginning.' },
    limit: { type: 'integer', format: 'int32', minimum: 1, maximum: 1000, default: 500, description: 'Most server changes to return; `hasMore` tells to continue with pull.' },
    changes: {
      type: 'array',
      maxItems: MAX_SYNC_CHANGES,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['clientChangeId', 'entity', 'op'],
        properties: {
          clientChangeId: { ...uuid, description: 'Made by the client once per change and reused on retry: a change whose id the server has seen (within 30 days) is not applied again; its first outcome is replayed as `duplicate`.' },
          entity: { type: 'string', enum: SYNC_ENTITIES },
          op: { type: 'string', enum: SYNC_OPS, description: '`favorite` applies to items only; settings take only `upsert`.' },
          id: { ...uuid, description: 'The item or snippet id (client-made UUID for a new one). Not used for settings.' },
          data: {
            type: ['object', 'null'],
            description: 'item upsert: {type, content, source, favorite?}; item favorite: {favorite}; snippet upsert: {name, content, keyword?}; settings upsert: a settings patch; delete: none. Checked per change: invalid data rejects only that change (a NUL character anywhere in the body is a 400 for the whole batch).',
          },
          baseSeq: { type: 'integer', format: 'int64', minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'The seq of the entity version this change was made on. If the entity changed on the server after it, the change is a `conflict` and not applied. Absent: last writer wins.' },
        },
      },
    },
  },
} as const;

/** Per-change `data` of sync, checked one change at a time. */
export const syncItemDataSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['type', 'content', 'source'],
  properties: { type: itemType, content: itemContent, source: itemSource, favorite: { type: 'boolean' } },
} as const;
export const syncFavoriteDataSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['favorite'],
  properties: { favorite: { type: 'boolean' } },
} as const;

// ---- response schemas (documentation and the test harness's response checks)

const item = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'type', 'content', 'source', 'favorite', 'createdAt', 'updatedAt'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    type: itemType,
    content: { type: 'string' },
    source: { type: 'string' },
    favorite: { type: 'boolean' },
    createdAt: { ...timestamp, description: 'When the content was last copied: creating an item whose type and content equal an existing item moves that item to the top and sets this to now.' },
    updatedAt: timestamp,
  },
} as const;

const snippet = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'name', 'content', 'keyword', 'createdAt', 'updatedAt'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    name: { type: 'string' },
    content: { type: 'string' },
    keyword: { type: ['string', 'null'] },
    createdAt: timestamp,
    updatedAt: timestamp,
  },
} as const;

const settings = {
  type: 'object',
  additionalProperties: false,
  required: ['historyLimit', 'retentionDays', 'captureEnabled', 'updatedAt'],
  properties: {
    historyLimit: { type: 'integer' },
    retentionDays: { type: 'integer' },
    captureEnabled: { type: 'boolean' },
    updatedAt: { type: ['string', 'null'], description: 'null until the settings are first changed.' },
  },
} as const;

const change = {
  type: 'object',
  additionalProperties: false,
  required: ['seq', 'entity', 'id', 'op', 'data'],
  properties: {
    seq: { type: 'integer', description: 'Strictly increasing per account (gaps allowed). Use it as `baseSeq` for changes made on this version.' },
    entity: { type: 'string', enum: SYNC_ENTITIES },
    id: { type: 'string', format: 'uuid', description: 'Item or snippet id; for settings, the account id.' },
    op: { type: 'string', enum: ['upsert', 'delete'] },
    data: {
      description: 'The entity as it is now (an item, snippet or settings object) for `upsert`; null for `delete` (a tombstone).',
      anyOf: [{ $ref: '#/components/schemas/Item' }, { $ref: '#/components/schemas/Snippet' }, { $ref: '#/components/schemas/Settings' }, { type: 'null' }],
    },
  },
} as const;

const changePage = {
  type: 'object',
  additionalProperties: false,
  required: ['changes', 'cursor', 'hasMore'],
  properties: {
    changes: { type: 'array', items: { $ref: '#/components/schemas/Change' } },
    cursor: { type: 'string', description: 'Opaque; send it back on the next pull or sync.' },
    hasMore: { type: 'boolean' },
  },
} as const;

const syncResult = {
  type: 'object',
  additionalProperties: false,
  required: ['clientChangeId', 'status', 'seq', 'error'],
  properties: {
    clientChangeId: { type: 'string' },
    status: { type: 'string', enum: ['applied', 'duplicate', 'conflict', 'rejected'] },
    original: { type: 'string', enum: ['applied', 'conflict', 'rejected'], description: 'For `duplicate`: the outcome of the first time this change was received.' },
    seq: { type: ['integer', 'null'], description: 'applied: the seq of the change (null when nothing had to change, e.g. deleting an item that is already gone); conflict: the seq of the server version that won.' },
    error: { type: ['string', 'null'], description: 'Why a change was rejected or conflicted.' },
  },
} as const;

const deleted = {
  type: 'object',
  additionalProperties: false,
  required: ['deleted'],
  properties: { deleted: { type: 'integer', minimum: 0 } },
} as const;

const keyRecord = {
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

// ---- document

const json = (schema: object, description: string) => ({ description, content: { 'application/json': { schema } } });
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const resp = (name: string) => ({ $ref: `#/components/responses/${name}` });

/** Statuses every authenticated /api operation can answer. */
const common = { 401: resp('Unauthorized'), 403: resp('Forbidden'), 429: resp('RateLimited'), 500: resp('Internal') };
/** ...and those of operations that read a JSON body. */
const withBody = { ...common, 400: resp('BadRequest'), 413: resp('TooLarge'), 415: resp('UnsupportedEncoding') };
const body = (schema: object, required = true) => ({ required, content: { 'application/json': { schema } } });
const idParam = (what: string) => idPathParameter(`The ${what} id (a UUID; anything else is 404).`);
const scope = (name: string) => `Needs the scope \`${name}\` (a key without it: 403).`;

const SYNC_PROTOCOL = `
Sync protocol (v1).

Every change to an account's items, snippets and settings is written, in the transaction that makes it, to a per-account change log and gets a sequence number \`seq\`: strictly increasing per account, allocated under a per-account row lock, so changes commit in seq order and a reader never sees a higher seq before a lower one. Gaps are normal.

The log keeps only the latest change per entity (a later change replaces the earlier row with a higher seq), so it is as small as the live data plus recent tombstones. Deletions (API deletes, bulk deletes, history-limit and retention pruning) are tombstones: \`op: "delete"\`, \`data: null\`. Tombstones older than ${TOMBSTONE_DAYS} days are dropped; a cursor older than the newest dropped tombstone is answered 410 Gone: the client must discard its local state and resync from no cursor.

Cursor: an opaque string (base64url of \`v1:<seq>\`). Malformed: 400. A cursor ahead of the account's log (not issued by this server for this account) is 410 as well. No cursor (or an empty one): from the beginning; that is always allowed and yields the full current state.

Pull: GET /api/clipboard/pull returns changes with seq above the cursor, in seq order, at most \`limit\`, with \`hasMore\` and the next cursor (the seq of the last change returned; the given cursor when none). Apply \`upsert\` by replacing the local entity with \`data\` and \`delete\` by removing it; applying a change twice is harmless.

Sync: POST /api/clipboard/sync applies the client's batch (0 to ${MAX_SYNC_CHANGES} changes) in order in ONE transaction, records each \`clientChangeId\` (a retried batch applies once; the first outcome is replayed as \`duplicate\` with \`original\`), then returns the per-change results and the server changes after the client's cursor, exactly like pull. Those include the client's own applied changes (echoed with their seq): applying them again is harmless and the cursor moves past them. A cursor that is expired is 410 and nothing is applied.

Changes: item \`upsert\` {type, content, source, favorite?} creates the item under the client-made \`id\` or replaces those fields of an existing one; item \`favorite\` {favorite} sets the flag; \`delete\` removes it. snippet \`upsert\` {name, content, keyword?} creates or replaces; \`delete\`. settings \`upsert\` with a settings patch. Items created by sync get the server's arrival time as createdAt and are not merged with identical content (the client's id is kept).

Conflict rule (deterministic): (1) deletes win: a delete always applies, and an upsert or favorite for an id whose tombstone is in the log is a \`conflict\` (not applied; the tombstone stands). (2) With \`baseSeq\`, an upsert or favorite of an entity whose latest change has a higher seq than \`baseSeq\` is a \`conflict\` (not applied; \`seq\` names the server version, which the client receives in \`changes\` or already has). (3) Without \`baseSeq\`, last writer wins in server arrival order. Deleting something already gone is \`applied\` with seq null.

Rejected (not applied, with \`error\`): invalid \`data\` for the entity and op, a missing \`id\`, \`favorite\` on a non-item, a favorite for an unknown id, an id already used by another record, the snippet limit (${MAX_SNIPPETS}) or a duplicate keyword, and a scope the key lacks: snippet changes need \`snippets:write\`, settings changes \`settings:write\`.

Scopes: pull needs \`clipboard:read\`; sync needs \`clipboard:read\` and \`clipboard:write\` (it answers item contents). Snippet changes appear in pull and sync answers only for callers holding \`snippets:read\`, settings changes only with \`settings:read\` (browser sessions hold every scope).

Pruning by history limit and retention runs after a sync batch that added items or changed settings; the resulting tombstones are in the same answer.`.trim();

const webhooks = webhookOpenApi('/api/clipboard/webhooks', CLIPBOARD_EVENTS);

export const openapiDocument = {
  openapi: '3.1.0',
  info: {
    title: 'Clipboard API',
    version: '1.0.0',
    license: openapiLicense,
    description: [
      'Clipboard history, snippets and settings of one account, reachable with scoped API keys (`Authorization: Bearer <key>`) or the browser session cookie `clipboard_sid`.',
      'Errors are `{ "error": "<message>" }`. 401: no valid key or session. 403: a key lacking the endpoint\'s scope, or a session call from a foreign Origin. 400: invalid body or query (unknown query parameters are ignored; unknown body fields are refused). 404: an unknown route, or an id that does not exist for this account (another account\'s record included; non-UUID ids too). 413: body over 1 MB. 429: more than RATE_LIMIT_PER_MINUTE (default 300) requests per minute per account, with `Retry-After`; back off exponentially.',
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
    operationsTag,
  ],
  components: {
    securitySchemes: securitySchemes('clipboard', ['clipboard:read', 'clipboard:write', 'snippets:read', 'snippets:write', 'settings:read', 'settings:write', 'webhooks']),
    schemas: {
      Error: errorEnvelopeSchema('simple'),
      ...webhooks.schemas,
      Item: item,
      ItemList: {
        type: 'object',
        additionalProperties: false,
        required: ['items', 'hasMore'],
        properties: { items: { type: 'array', items: ref('Item') }, hasMore: { type: 'boolean', description: 'More items exist after this page (no total is computed).' } },
      },
      CreateItem: createItemSchema,
      FavoriteBody: favoriteBodySchema,
      BulkDelete: bulkDeleteSchema,
      Deleted: deleted,
      Snippet: snippet,
      SnippetList: { type: 'object', additionalProperties: false, required: ['items'], properties: { items: { type: 'array', items: ref('Snippet'), maxItems: MAX_SNIPPETS } } },
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
      Forbidden: json(ref('Error'), 'The key lacks the scope, a key called a session-only route, or a session came from a foreign Origin.'),
      NotFound: json(ref('Error'), 'No such record for this account (or a malformed id).'),
      Conflict: json(ref('Error'), 'A business rule refused the change (the message says which).'),
      Gone: json(ref('Error'), 'The cursor is older than the retained change log (or not from this log): discard local state and resync without a cursor.'),
      TooLarge: json(ref('Error'), 'The body is over 1 MB.'),
      UnsupportedEncoding: json(ref('Error'), 'Unsupported content encoding or charset.'),
      RateLimited: {
        ...json(ref('Error'), 'Rate limited (RATE_LIMIT_PER_MINUTE per account per minute, default 300); back off exponentially.'),
        headers: { 'Retry-After': { schema: { type: 'integer' }, description: 'Seconds to wait.' } },
      },
      Internal: json(ref('Error'), 'Unexpected server fault (details are logged, never returned).'),
    },
  },
  security: [{ apiKey: [] }, { session: [] }],
  paths: {
    ...webhooks.paths,
    // Sign-up, login, logout and the account (shared by the three services, in this envelope).
    ...authOpenApiPaths('clipboard'),
    ...operationalPaths,
    '/api/settings/keys': {
      get: {
        operationId: 'listApiKeys',
        tags: ['API keys'],
        summary: 'List the account\'s API keys (browser session only; an API key gets 403)',
        security: [{ session: [] }],
        responses: { 200: json({ type: 'object', required: ['items'], properties: { items: { type: 'array', items: ref('Key') } } }, 'Keys without secrets'), ...common },
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
        responses: { 200: json({ type: 'object', required: ['id', 'revoked'], properties: { id: { type: 'string' }, revoked: { const: true } } }, 'Revoked'), 404: resp('NotFound'), ...common },
      },
    },
    '/api/clipboard': {
      get: {
        operationId: 'listItems',
        tags: ['Clipboard'],
        summary: 'List items, newest first (createdAt desc, id desc)',
        description: `${scope('clipboard:read')} Offset pagination as the spec mandates: \`limit\` 1 to 500 (default 50), \`offset\` 0 to 100000 (default 0); anything else is 400. Items past the retention period are not listed.`,
        parameters: [
          { name: 'limit', in: 'query', schema: listItemsQuerySchema.properties.limit },
          { name: 'offset', in: 'query', schema: listItemsQuerySchema.properties.offset },
          { name: 'favorite', in: 'query', schema: listItemsQuerySchema.properties.favorite },
        ],
        responses: { 200: json(ref('ItemList'), 'A page of items'), 400: resp('BadRequest'), ...common },
      },
      post: {
        operationId: 'createItem',
        tags: ['Clipboard'],
        summary: 'Add an item',
        description: `${scope('clipboard:write')} If an item with the same type and content exists, it is moved to the top instead of duplicated: its createdAt and updatedAt become now, its source becomes the new one, its favorite flag stays, and the answer is 200 with that item (201 for a new item). Adding an item prunes the oldest non-favorites beyond the history limit and those past the retention period.`,
        requestBody: body(ref('CreateItem')),
        responses: { 201: json(ref('Item'), 'Created'), 200: json(ref('Item'), 'An identical item existed and was moved to the top'), ...withBody },
      },
      delete: {
        operationId: 'clearHistory',
        tags: ['Clipboard'],
        summary: 'Delete every non-favorite item; favorites stay',
        description: scope('clipboard:write'),
        responses: { 200: json(ref('Deleted'), 'How many items were deleted'), ...common },
      },
    },
    '/api/clipboard/bulk': {
      delete: {
        operationId: 'bulkDeleteItems',
        tags: ['Clipboard'],
        summary: 'Delete selected items',
        description: `${scope('clipboard:write')} Favorites named in \`ids\` are deleted too (the selection is explicit).`,
        requestBody: body(ref('BulkDelete')),
        responses: { 200: json(ref('Deleted'), 'How many of the named items were deleted'), ...withBody },
      },
    },
    '/api/clipboard/pull': {
      get: {
        operationId: 'pullClipboardChanges',
        tags: ['Sync'],
        summary: 'Changes after a cursor (sync protocol)',
        description: `${scope('clipboard:read')} See the sync protocol in the document description.`,
        security: [{ apiKey: ['clipboard:read'] }, { session: [] }],
        parameters: [
          { name: 'cursor', in: 'query', schema: pullQuerySchema.properties.cursor },
          { name: 'limit', in: 'query', schema: pullQuerySchema.properties.limit },
        ],
        responses: { 200: json(ref('ChangePage'), 'Changes in seq order'), 400: resp('BadRequest'), 410: resp('Gone'), ...common },
      },
    },
    '/api/clipboard/pull/stream': {
      get: streamOperation({
        operationId: 'streamClipboardChanges',
        tags: ['Sync'],
        summary: 'Live: the pull feed pushed as Server-Sent Events',
        feed: 'GET /api/clipboard/pull',
        change: ref('Change'),
        cursorMaxLength: 200,
        security: [{ apiKey: ['clipboard:read'] }, { session: [] }],
        responses: {
          400: resp('BadRequest'),
          410: resp('Gone'),
          ...common,
          429: {
            ...json(ref('Error'), 'At most 10 streams per account are open (`too_many_streams`), or rate limited as every request; Retry-After says when to retry.'),
            headers: { 'Retry-After': { schema: { type: 'integer', format: 'int32', minimum: 1, maximum: 86_400 }, description: 'Seconds to wait.' } },
          },
        },
      }),
    },
    '/api/clipboard/sync': {
      post: {
        operationId: 'syncClipboardChanges',
        tags: ['Sync'],
        summary: 'Apply a batch of client changes and receive server changes (sync protocol)',
        description: `Needs the scopes \`clipboard:read\` and \`clipboard:write\` (a key without either: 403). See the sync protocol in the document description.`,
        security: [{ apiKey: ['clipboard:read', 'clipboard:write'] }, { session: [] }],
        requestBody: body(ref('SyncRequest')),
        responses: { 200: json(ref('SyncResponse'), 'Per-change results and the server changes after the cursor'), 410: resp('Gone'), ...withBody },
      },
    },
    '/api/clipboard/{id}': {
      delete: {
        operationId: 'deleteItem',
        tags: ['Clipboard'],
        summary: 'Delete one item',
        description: `${scope('clipboard:write')} Answers 200 \`{"deleted": 1}\` (the same shape as the other deletes).`,
        parameters: [idParam('item')],
        responses: { 200: json(ref('Deleted'), 'Deleted'), 404: resp('NotFound'), ...common },
      },
    },
    '/api/clipboard/{id}/favorite': {
      patch: {
        operationId: 'toggleFavorite',
        tags: ['Clipboard'],
        summary: 'Toggle (or set) the favorite flag',
        description: `${scope('clipboard:write')} Without a body the flag is toggled (the spec); \`{"favorite": bool}\` sets it. Returns the item. Unfavoriting does not prune at once; the history limit applies on the next add.`,
        parameters: [idParam('item')],
        requestBody: body(ref('FavoriteBody'), false),
        responses: { 200: json(ref('Item'), 'The item'), 404: resp('NotFound'), ...withBody },
      },
    },
    '/api/snippets': {
      get: {
        operationId: 'listSnippets',
        tags: ['Snippets'],
        summary: 'All snippets (at most 200), by name (ignoring case), then id',
        description: scope('snippets:read'),
        responses: { 200: json(ref('SnippetList'), 'Every snippet'), ...common },
      },
      post: {
        operationId: 'createSnippet',
        tags: ['Snippets'],
        summary: 'Create a snippet',
        description: `${scope('snippets:write')} The ${MAX_SNIPPETS + 1}st snippet is 409; a keyword another snippet has (ignoring case) is 409.`,
        requestBody: body(ref('SnippetInput')),
        responses: { 201: json(ref('Snippet'), 'Created'), 409: resp('Conflict'), ...withBody },
      },
      put: {
        operationId: 'replaceSnippets',
        tags: ['Snippets'],
        summary: 'Replace every snippet, atomically',
        description: `${scope('snippets:write')} Either the whole set is stored or nothing changes. Answers the new set as GET does.`,
        requestBody: body(ref('ReplaceSnippets')),
        responses: { 200: json(ref('SnippetList'), 'The new set'), ...withBody },
      },
    },
    '/api/snippets/{id}': {
      delete: {
        operationId: 'deleteSnippet',
        tags: ['Snippets'],
        summary: 'Delete one snippet',
        description: `${scope('snippets:write')} Answers 200 \`{"deleted": 1}\`.`,
        parameters: [idParam('snippet')],
        responses: { 200: json(ref('Deleted'), 'Deleted'), 404: resp('NotFound'), ...common },
      },
    },
    '/api/settings': {
      get: {
        operationId: 'getSettings',
        tags: ['Settings'],
        summary: 'Read settings (defaults until changed)',
        description: scope('settings:read'),
        responses: { 200: json(ref('Settings'), 'Settings'), ...common },
      },
      put: {
        operationId: 'updateSettings',
        tags: ['Settings'],
        summary: 'Partially update settings',
        description: `${scope('settings:write')} Returns the full settings. Lowering historyLimit or setting retentionDays prunes at once.`,
        requestBody: body(ref('SettingsPatch')),
        responses: { 200: json(ref('Settings'), 'The full settings after the update'), ...withBody },
      },
    },
  },
} as const;

// Every operation that needs the database documents its outage answer (503 with Retry-After).
documentOutages(openapiDocument);
// A key needs the scope of the resource the path names (/api/clipboard, /api/snippets, /api/settings):
// `:read` for GET, `:write` for everything else (the MCP tools follow this).
withApiKeyScopes(openapiDocument, (method, path) => [`${path.split('/')[2]}:${method === 'get' ? 'read' : 'write'}`]);
// ...and the rate-limit and CORS headers of every API answer.
documentCommonHeaders(openapiDocument);
