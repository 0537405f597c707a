import { body, common, dateTime, idParam, ITEM_TYPES, json, MAX_BULK_IDS, MAX_ITEM_CONTENT, MAX_QUERY, MAX_SEALED_CONTENT, MAX_SEARCHES_PER_ACCOUNT, ref, resp, scope, timestamp, uuid, withBody } from './shared.js';

// Clipboard items: list, create, bulk delete (itemsPaths); read, delete, favorite (itemPaths).

const itemType = {
  type: 'string',
  enum: ITEM_TYPES,
  description: 'Kind of textual content. `url` content must be an absolute URL (scheme:...). `sealed`: end-to-end encrypted by the client (see `content` and `keyId`). Binary content such as images is not stored by this service.',
} as const;
const itemContent = {
  type: 'string',
  minLength: 1,
  maxLength: MAX_SEALED_CONTENT,
  description: `1 to ${MAX_ITEM_CONTENT} characters (Unicode code points), stored exactly as sent (whitespace kept). NUL (U+0000) is refused with 400. A sealed item's content is the client's ciphertext, an opaque base64url string of 1 to ${MAX_SEALED_CONTENT} characters ([A-Za-z0-9_-], no padding) that the service stores and returns byte for byte and never reads.`,
} as const;
const itemSensitive = {
  type: 'boolean',
  description: 'A password, one-time code or token: the item is deleted `sensitiveItemTtlSeconds` (a setting, default 60) after it is created (the pull feed and streams show the delete), cannot be a favorite (409), and its content never leaves the account: webhook events carry it without `content`, assistants (MCP) see `content: null`, and no text search matches it. Default false.',
} as const;
const itemKeyId = {
  type: 'string',
  minLength: 1,
  maxLength: 64,
  pattern: '^[\\x21-\\x7e]{1,64}$',
  description: 'Sealed items only (required there): the name of the client\'s key, 1 to 64 printable ASCII characters.',
} as const;
const itemDedupeKey = {
  type: 'string',
  minLength: 1,
  maxLength: 128,
  pattern: '^[\\x21-\\x7e]{1,128}$',
  description: 'Sealed items only, optional: the client\'s keyed hash of the plaintext, 1 to 128 printable ASCII characters. A sealed create with the dedupeKey of an existing sealed item moves that item to the top with the new content, as an equal text does.',
} as const;

/** The rules of the two kinds: a sealed item names its key and its content is base64url; a plain one has neither key nor hash. */
const kinds = {
  if: { required: ['type'], properties: { type: { const: 'sealed' } } },
  then: { required: ['keyId'], properties: { content: { type: 'string', maxLength: MAX_SEALED_CONTENT, pattern: '^[A-Za-z0-9_-]+$' }, keyId: itemKeyId } },
  else: { properties: { content: { type: 'string', maxLength: MAX_ITEM_CONTENT }, keyId: false, dedupeKey: false } },
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
  properties: { type: itemType, content: itemContent, source: itemSource, sensitive: itemSensitive, keyId: itemKeyId, dedupeKey: itemDedupeKey },
  ...kinds,
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

export const clearHistoryQuerySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    before: {
      ...dateTime,
      description: 'Only the non-favorites created before this instant (ISO 8601 with `Z` or an offset, on a real calendar day); default: every one, as of now. Assistants (MCP) get the time their user was asked, so what was copied after the question stays.',
    },
  },
} as const;

export const listItemsQuerySchema = {
  type: 'object',
  properties: {
    limit: { type: 'integer', minimum: 1, maximum: 500, default: 50 },
    offset: { type: 'integer', minimum: 0, maximum: 100_000, default: 0 },
    favorite: { type: 'boolean', description: '`true`: only favorites; `false`: only non-favorites; absent: all.' },
    q: {
      type: 'string',
      minLength: 1,
      maxLength: MAX_QUERY,
      description: `Text search: only items whose content contains this (1 to ${MAX_QUERY} characters, ignoring case), newest first, paged as the list. Sensitive and sealed items never match.`,
    },
    query: { type: 'string', minLength: 1, maxLength: MAX_QUERY, description: 'The same as `q` (the name assistants use); `q` wins when both are sent.' },
  },
} as const;

export const item = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'type', 'content', 'source', 'favorite', 'sensitive', 'createdAt', 'updatedAt'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    type: itemType,
    content: {
      type: ['string', 'null'],
      description: 'The text, or for a sealed item the ciphertext exactly as its client sent it. Null only for an OAuth access token (an assistant\'s connected app): it sees sensitive and sealed items with `content: null`, as MCP shows them, on every path that returns items.',
    },
    source: { type: 'string' },
    favorite: { type: 'boolean' },
    sensitive: { type: 'boolean' },
    expiresAt: { ...timestamp, description: 'Sensitive items only: when the item is deleted.' },
    keyId: { type: 'string', description: 'Sealed items only: the name of the client\'s key.' },
    dedupeKey: { type: 'string', description: 'Sealed items only, when the client sent one.' },
    createdAt: { ...timestamp, description: 'When the content was last copied: creating an item whose type and content equal an existing item moves that item to the top and sets this to now.' },
    updatedAt: timestamp,
  },
} as const;

export const deleted = {
  type: 'object',
  additionalProperties: false,
  required: ['deleted'],
  properties: { deleted: { type: 'integer', minimum: 0 } },
} as const;

export const itemsPaths = {
  '/api/clipboard': {
    get: {
      operationId: 'listItems',
      tags: ['Clipboard'],
      summary: 'List items, newest first (createdAt desc, id desc)',
      description: `${scope('clipboard:read')} Offset pagination as the spec mandates: \`limit\` 1 to 500 (default 50), \`offset\` 0 to 100000 (default 0); anything else is 400. Items past the retention period are not listed. With \`q\`, only the items whose content contains it (a text search through a trigram index; sensitive and sealed items never match). A page is at most 8 MiB of JSON: when \`limit\` items would be more, fewer come with \`hasMore: true\` (continue at \`offset\` plus the items received). A text search runs at most 1.5 s (beyond it: 422, see SearchTooExpensive) and at most ${MAX_SEARCHES_PER_ACCOUNT} of one account run at once (one more: 429 with \`Retry-After\`).`,
      parameters: [
        { name: 'limit', in: 'query', schema: listItemsQuerySchema.properties.limit },
        { name: 'offset', in: 'query', schema: listItemsQuerySchema.properties.offset },
        { name: 'favorite', in: 'query', schema: listItemsQuerySchema.properties.favorite },
        { name: 'q', in: 'query', schema: listItemsQuerySchema.properties.q },
        { name: 'query', in: 'query', schema: listItemsQuerySchema.properties.query },
      ],
      responses: { 200: json(ref('ItemList'), 'A page of items'), 400: resp('BadRequest'), 422: resp('SearchTooExpensive'), ...common },
    },
    post: {
      operationId: 'createItem',
      tags: ['Clipboard'],
      summary: 'Add an item',
      description: `${scope('clipboard:write')} If an item with the same type and content exists, it is moved to the top instead of duplicated: its createdAt and updatedAt become now, its source becomes the new one, its favorite flag stays, and the answer is 200 with that item (201 for a new item). Adding an item prunes the oldest non-favorites beyond the history limit and those past the retention period. \`sensitive: true\` makes the item expire (see the field; it merges only with a sensitive item of the same content, whose time starts again). \`type: "sealed"\` stores the client's ciphertext with its \`keyId\` (and optional \`dedupeKey\`): content that is not base64url is 400.`,
      requestBody: body(ref('CreateItem')),
      responses: { 201: json(ref('Item'), 'Created'), 200: json(ref('Item'), 'An identical item existed and was moved to the top'), ...withBody },
    },
    delete: {
      operationId: 'clearHistory',
      tags: ['Clipboard'],
      summary: 'Delete every non-favorite item; favorites stay',
      description: `${scope('clipboard:write')} With \`before\`, only the non-favorites created before that instant (a \`before\` that is not an ISO date-time is 400).`,
      parameters: [{ name: 'before', in: 'query', schema: clearHistoryQuerySchema.properties.before, 'x-mcp-asked-at': true }],
      responses: { 200: json(ref('Deleted'), 'How many items were deleted'), 400: resp('BadRequest'), ...common },
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
};

export const itemPaths = {
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
      description: `${scope('clipboard:write')} Without a body the flag is toggled (the spec); \`{"favorite": bool}\` sets it. Returns the item. Unfavoriting does not prune at once; the history limit applies on the next add. A sensitive item cannot be a favorite: 409 \`sensitive_item\`.`,
      parameters: [idParam('item')],
      requestBody: body(ref('FavoriteBody'), false),
      responses: { 200: json(ref('Item'), 'The item'), 404: resp('NotFound'), 409: resp('Conflict'), ...withBody },
    },
  },
};
