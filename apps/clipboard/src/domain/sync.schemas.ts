import { uuidSchema } from '@app/http-errors/validation';
import { createItemSchema } from './items.schemas.js';
import { MAX_SYNC_CHANGES } from './limits.js';

// The sync request schemas (the routes compile them; the domain's types and the document come from them).

export const pullQuerySchema = {
  type: 'object',
  properties: {
    cursor: {
      type: 'string',
      maxLength: 200,
      description:
        'Opaque cursor from a previous pull or sync. Absent or empty: from the beginning of the retained log.',
    },
    limit: { type: 'integer', minimum: 1, maximum: 1000, default: 500 },
  },
} as const;

export const SYNC_ENTITIES = ['item', 'snippet', 'settings'] as const;

const SYNC_OPS = ['upsert', 'delete', 'favorite'] as const;

export const syncBodySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['changes'],
  properties: {
    cursor: {
      type: 'string',
      maxLength: 200,
      description:
        'The cursor the client last received; the answer carries the changes after it. Absent: from the beginning.',
    },
    limit: {
      type: 'integer',
      format: 'int32',
      minimum: 1,
      maximum: 1000,
      default: 500,
      description: 'Most server changes to return; `hasMore` tells to continue with pull.',
    },
    changes: {
      type: 'array',
      maxItems: MAX_SYNC_CHANGES,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['clientChangeId', 'entity', 'op'],
        properties: {
          clientChangeId: {
            ...uuidSchema,
            description:
              'Made by the client once per change and reused on retry: a change whose id the server has seen (within 30 days) is not applied again; its first outcome is replayed as `duplicate`.',
          },
          entity: { type: 'string', enum: SYNC_ENTITIES },
          op: {
            type: 'string',
            enum: SYNC_OPS,
            description: '`favorite` applies to items only; settings take only `upsert`.',
          },
          id: {
            ...uuidSchema,
            description: 'The item or snippet id (client-made UUID for a new one). Not used for settings.',
          },
          data: {
            type: ['object', 'null'],
            description:
              'item upsert: {type, content, source, favorite?, sensitive?, keyId?, dedupeKey?} (as a create; a sensitive item cannot be a favorite); item favorite: {favorite}; snippet upsert: {name, content, keyword?}; settings upsert: a settings patch; delete: none. Checked per change: invalid data rejects only that change (a NUL character anywhere in the body is a 400 for the whole batch).',
          },
          baseSeq: {
            type: 'integer',
            format: 'int64',
            minimum: 0,
            maximum: Number.MAX_SAFE_INTEGER,
            description:
              'The seq of the entity version this change was made on. If the entity changed on the server after it, the change is a `conflict` and not applied. Absent: last writer wins.',
          },
        },
      },
    },
  },
} as const;

/** Per-change `data` of sync, checked one change at a time. */
export const syncItemDataSchema = {
  type: 'object',
  additionalProperties: false,
  required: createItemSchema.required,
  properties: { ...createItemSchema.properties, favorite: { type: 'boolean' } },
  if: createItemSchema.if,
  then: createItemSchema.then,
  else: createItemSchema.else,
} as const;

export const syncFavoriteDataSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['favorite'],
  properties: { favorite: { type: 'boolean' } },
} as const;
