import { uuidSchema } from '@app/http-errors/validation';
import { MAX_BULK_IDS, MAX_ITEM_CONTENT, MAX_QUERY, MAX_SEALED_CONTENT } from './limits.js';

// The request schemas of clipboard items (the routes compile them; the domain's types and the document come from them).

const ITEM_TYPES = ['text', 'url', 'html', 'rtf', 'code', 'sealed'] as const;

/** An instant a client sends: ISO 8601 with `Z` or an offset, on a real calendar day (ajv's date-time). */
const dateTime = { type: 'string', format: 'date-time', maxLength: 40 } as const;

export const itemType = {
  type: 'string',
  enum: ITEM_TYPES,
  description:
    'Kind of textual content. `url` content must be an absolute URL (scheme:...). `sealed`: end-to-end encrypted by the client (see `content` and `keyId`). Binary content such as images is not stored by this service.',
} as const;

const itemContent = {
  type: 'string',
  minLength: 1,
  maxLength: MAX_SEALED_CONTENT,
  description: `1 to ${MAX_ITEM_CONTENT} characters (Unicode code points), stored exactly as sent (whitespace kept). NUL (U+0000) is refused with 400. A sealed item's content is the client's ciphertext, an opaque base64url string of 1 to ${MAX_SEALED_CONTENT} characters ([A-Za-z0-9_-], no padding) that the service stores and returns byte for byte and never reads.`,
} as const;

const itemSensitive = {
  type: 'boolean',
  description:
    'A password, one-time code or token: the item is deleted `sensitiveItemTtlSeconds` (a setting, default 60) after it is created (the pull feed and streams show the delete), cannot be a favorite (409), and its content never leaves the account: webhook events carry it without `content`, assistants (MCP) see `content: null`, and no text search matches it. Default false.',
} as const;

const itemKeyId = {
  type: 'string',
  minLength: 1,
  maxLength: 64,
  pattern: '^[\\x21-\\x7e]{1,64}$',
  description: "Sealed items only (required there): the name of the client's key, 1 to 64 printable ASCII characters.",
} as const;

const itemDedupeKey = {
  type: 'string',
  minLength: 1,
  maxLength: 128,
  pattern: '^[\\x21-\\x7e]{1,128}$',
  description:
    "Sealed items only, optional: the client's keyed hash of the plaintext, 1 to 128 printable ASCII characters. A sealed create with the dedupeKey of an existing sealed item moves that item to the top with the new content, as an equal text does.",
} as const;

/** The rules of the two kinds: a sealed item names its key and its content is base64url; a plain one has neither key nor hash. */
const kinds = {
  if: { required: ['type'], properties: { type: { const: 'sealed' } } },
  then: {
    required: ['keyId'],
    properties: {
      content: { type: 'string', maxLength: MAX_SEALED_CONTENT, pattern: '^[A-Za-z0-9_-]+$' },
      keyId: itemKeyId,
    },
  },
  else: { properties: { content: { type: 'string', maxLength: MAX_ITEM_CONTENT }, keyId: false, dedupeKey: false } },
} as const;

const itemSource = {
  type: 'string',
  maxLength: 64,
  pattern: '^[a-z0-9][a-z0-9._-]{0,63}$',
  description:
    'Where the content was copied: a lower-case token of 1 to 64 characters [a-z0-9._-], e.g. `api` (API clients), `desktop`, `mobile`, `browser`, `cli`.',
  examples: ['api'],
} as const;

export const createItemSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['type', 'content', 'source'],
  properties: {
    type: itemType,
    content: itemContent,
    source: itemSource,
    sensitive: itemSensitive,
    keyId: itemKeyId,
    dedupeKey: itemDedupeKey,
  },
  ...kinds,
} as const;

export const favoriteBodySchema = {
  type: 'object',
  additionalProperties: false,
  description:
    'Optional. Without a body (or with `{}`) the flag is toggled; `{"favorite": true|false}` sets it explicitly, which is safe to retry.',
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
      items: uuidSchema,
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
      description:
        'Only the non-favorites created before this instant (ISO 8601 with `Z` or an offset, on a real calendar day); default: every one, as of now. Assistants (MCP) get the time their user was asked, so what was copied after the question stays.',
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
    query: {
      type: 'string',
      minLength: 1,
      maxLength: MAX_QUERY,
      description: 'The same as `q` (the name assistants use); `q` wins when both are sent.',
    },
  },
} as const;
