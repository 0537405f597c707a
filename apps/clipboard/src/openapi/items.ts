import { body, common, idParam, ITEM_TYPES, json, MAX_BULK_IDS, MAX_ITEM_CONTENT, ref, resp, scope, timestamp, uuid, withBody } from './shared.js';

// Clipboard items: list, create, bulk delete (itemsPaths); read, delete, favorite (itemPaths).

export const itemType = {
  type: 'string',
  enum: ITEM_TYPES,
  description: 'Kind of textual content. `url` content must be an absolute URL (scheme:...). Binary content such as images is not stored by this service.',
} as const;
export const itemContent = {
  type: 'string',
  minLength: 1,
  maxLength: MAX_ITEM_CONTENT,
  description: `1 to ${MAX_ITEM_CONTENT} characters (Unicode code points), stored exactly as sent (whitespace kept). NUL (U+0000) is refused with 400.`,
} as const;
export const itemSource = {
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

export const item = {
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
      description: `${scope('clipboard:write')} Without a body the flag is toggled (the spec); \`{"favorite": bool}\` sets it. Returns the item. Unfavoriting does not prune at once; the history limit applies on the next add.`,
      parameters: [idParam('item')],
      requestBody: body(ref('FavoriteBody'), false),
      responses: { 200: json(ref('Item'), 'The item'), 404: resp('NotFound'), ...withBody },
    },
  },
};
