import { clearHistoryQuerySchema, itemType, listItemsQuerySchema } from '../domain/items.schemas.js';
import {
  body,
  common,
  idParam,
  json,
  MAX_SEARCHES_PER_ACCOUNT,
  ref,
  resp,
  scope,
  timestamp,
  withBody,
} from './shared.js';

// Clipboard items: list, create, bulk delete (itemsPaths); read, delete, favorite (itemPaths).

export const item = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'type', 'content', 'source', 'favorite', 'sensitive', 'createdAt', 'updatedAt'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    type: itemType,
    content: {
      type: ['string', 'null'],
      description:
        "The text, or for a sealed item the ciphertext exactly as its client sent it. Null only for an OAuth access token (an assistant's connected app): it sees sensitive and sealed items with `content: null`, as MCP shows them, on every path that returns items.",
    },
    source: { type: 'string' },
    favorite: { type: 'boolean' },
    sensitive: { type: 'boolean' },
    expiresAt: { ...timestamp, description: 'Sensitive items only: when the item is deleted.' },
    keyId: { type: 'string', description: "Sealed items only: the name of the client's key." },
    dedupeKey: { type: 'string', description: 'Sealed items only, when the client sent one.' },
    createdAt: {
      ...timestamp,
      description:
        'When the content was last copied: creating an item whose type and content equal an existing item moves that item to the top and sets this to now.',
    },
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
      responses: {
        200: json(ref('ItemList'), 'A page of items'),
        400: resp('BadRequest'),
        422: resp('SearchTooExpensive'),
        ...common,
      },
    },
    post: {
      operationId: 'createItem',
      tags: ['Clipboard'],
      summary: 'Add an item',
      description: `${scope('clipboard:write')} If an item with the same type and content exists, it is moved to the top instead of duplicated: its createdAt and updatedAt become now, its source becomes the new one, its favorite flag stays, and the answer is 200 with that item (201 for a new item). Adding an item prunes the oldest non-favorites beyond the history limit and those past the retention period. \`sensitive: true\` makes the item expire (see the field; it merges only with a sensitive item of the same content, whose time starts again). \`type: "sealed"\` stores the client's ciphertext with its \`keyId\` (and optional \`dedupeKey\`): content that is not base64url is 400.`,
      requestBody: body(ref('CreateItem')),
      responses: {
        201: json(ref('Item'), 'Created'),
        200: json(ref('Item'), 'An identical item existed and was moved to the top'),
        ...withBody,
      },
    },
    delete: {
      operationId: 'clearHistory',
      tags: ['Clipboard'],
      summary: 'Delete every non-favorite item; favorites stay',
      description: `${scope('clipboard:write')} With \`before\`, only the non-favorites created before that instant (a \`before\` that is not an ISO date-time is 400).`,
      parameters: [
        { name: 'before', in: 'query', schema: clearHistoryQuerySchema.properties.before, 'x-mcp-asked-at': true },
      ],
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
