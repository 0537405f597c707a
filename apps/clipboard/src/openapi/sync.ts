import { pullQuerySchema, SYNC_ENTITIES } from '../domain/sync.schemas.js';
import { streamOperation } from '@app/auth/streams';
import {
  body,
  common,
  json,
  MAX_SNIPPETS,
  MAX_SYNC_CHANGES,
  ref,
  resp,
  scope,
  TOMBSTONE_DAYS,
  withBody,
} from './shared.js';

// Sync: pull (and its live stream) and push of items, snippets and settings changes.

export const change = {
  type: 'object',
  additionalProperties: false,
  required: ['seq', 'entity', 'id', 'op', 'data'],
  properties: {
    seq: {
      type: 'integer',
      description:
        'Strictly increasing per account (gaps allowed). Use it as `baseSeq` for changes made on this version.',
    },
    entity: { type: 'string', enum: SYNC_ENTITIES },
    id: { type: 'string', format: 'uuid', description: 'Item or snippet id; for settings, the account id.' },
    op: { type: 'string', enum: ['upsert', 'delete'] },
    data: {
      description:
        'The entity as it is now (an item, snippet or settings object) for `upsert`; null for `delete` (a tombstone).',
      anyOf: [
        { $ref: '#/components/schemas/Item' },
        { $ref: '#/components/schemas/Snippet' },
        { $ref: '#/components/schemas/Settings' },
        { type: 'null' },
      ],
    },
  },
} as const;

export const changePage = {
  type: 'object',
  additionalProperties: false,
  required: ['changes', 'cursor', 'hasMore'],
  properties: {
    changes: { type: 'array', items: { $ref: '#/components/schemas/Change' } },
    cursor: { type: 'string', description: 'Opaque; send it back on the next pull or sync.' },
    hasMore: { type: 'boolean' },
  },
} as const;

export const syncResult = {
  type: 'object',
  additionalProperties: false,
  required: ['clientChangeId', 'status', 'seq', 'error'],
  properties: {
    clientChangeId: { type: 'string' },
    status: { type: 'string', enum: ['applied', 'duplicate', 'conflict', 'rejected'] },
    original: {
      type: 'string',
      enum: ['applied', 'conflict', 'rejected'],
      description: 'For `duplicate`: the outcome of the first time this change was received.',
    },
    seq: {
      type: ['integer', 'null'],
      description:
        'applied: the seq of the change (null when nothing had to change, e.g. deleting an item that is already gone); conflict: the seq of the server version that won.',
    },
    error: { type: ['string', 'null'], description: 'Why a change was rejected or conflicted.' },
  },
} as const;

export const SYNC_PROTOCOL = `
Sync protocol (v1).

Every change to an account's items, snippets and settings is written, in the transaction that makes it, to a per-account change log and gets a sequence number \`seq\`: strictly increasing per account, allocated under a per-account row lock, so changes commit in seq order and a reader never sees a higher seq before a lower one. Gaps are normal.

The log keeps only the latest change per entity (a later change replaces the earlier row with a higher seq), so it is as small as the live data plus recent tombstones. Deletions (API deletes, bulk deletes, history-limit and retention pruning) are tombstones: \`op: "delete"\`, \`data: null\`. Tombstones older than ${TOMBSTONE_DAYS} days are dropped; a cursor older than the newest dropped tombstone is answered 410 Gone: the client must discard its local state and resync from no cursor.

Cursor: an opaque string (base64url of \`v1:<seq>\`). Malformed: 400. A cursor ahead of the account's log (not issued by this server for this account) is 410 as well. No cursor (or an empty one): from the beginning; that is always allowed and yields the full current state.

Pull: GET /api/clipboard/pull returns changes with seq above the cursor, in seq order, at most \`limit\` and at most 8 MiB of JSON (fewer changes when \`limit\` would be more; the same holds for a sync answer, its results included), with \`hasMore\` and the next cursor (the seq of the last change returned; the given cursor when none). Apply \`upsert\` by replacing the local entity with \`data\` and \`delete\` by removing it; applying a change twice is harmless.

Sync: POST /api/clipboard/sync applies the client's batch (0 to ${MAX_SYNC_CHANGES} changes) in order in ONE transaction, records each \`clientChangeId\` (a retried batch applies once; the first outcome is replayed as \`duplicate\` with \`original\`), then returns the per-change results and the server changes after the client's cursor, exactly like pull. Those include the client's own applied changes (echoed with their seq): applying them again is harmless and the cursor moves past them. A cursor that is expired is 410 and nothing is applied.

Changes: item \`upsert\` {type, content, source, favorite?, sensitive?, keyId?, dedupeKey?} creates the item under the client-made \`id\` or replaces those fields of an existing one; item \`favorite\` {favorite} sets the flag; \`delete\` removes it. snippet \`upsert\` {name, content, keyword?} creates or replaces; \`delete\`. settings \`upsert\` with a settings patch. Items created by sync get the server's arrival time as createdAt and are not merged with identical content (the client's id is kept). A sensitive item stays sensitive (an upsert cannot clear the flag) and is deleted when its time is up, which the log shows as its tombstone; a sealed item's content is stored and returned byte for byte.

Conflict rule (deterministic): (1) deletes win: a delete always applies, and an upsert or favorite for an id whose tombstone is in the log is a \`conflict\` (not applied; the tombstone stands). (2) With \`baseSeq\`, an upsert or favorite of an entity whose latest change has a higher seq than \`baseSeq\` is a \`conflict\` (not applied; \`seq\` names the server version, which the client receives in \`changes\` or already has). (3) Without \`baseSeq\`, last writer wins in server arrival order. Deleting something already gone is \`applied\` with seq null.

Rejected (not applied, with \`error\`; the REST API answers such a change 400 or 409): invalid \`data\` for the entity and op, a change that would leave an item sensitive and a favorite (a favorite for a sensitive item, or an upsert with \`sensitive: true\` of a favorite that does not also send \`favorite: false\`), a missing \`id\`, \`favorite\` on a non-item, a favorite for an unknown id, an id already used by another record, the snippet limit (${MAX_SNIPPETS}) or a duplicate keyword, and a scope the key lacks: snippet changes need \`snippets:write\`, settings changes \`settings:write\`.

Scopes: pull needs \`clipboard:read\`; sync needs \`clipboard:read\` and \`clipboard:write\` (it answers item contents). Snippet changes appear in pull and sync answers only for callers holding \`snippets:read\`, settings changes only with \`settings:read\` (browser sessions hold every scope).

Pruning by history limit and retention runs after a sync batch that added items or changed settings; the resulting tombstones are in the same answer.`.trim();

export const syncPaths = {
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
      responses: {
        200: json(ref('ChangePage'), 'Changes in seq order'),
        400: resp('BadRequest'),
        410: resp('Gone'),
        ...common,
      },
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
          ...json(
            ref('Error'),
            'At most 10 streams per account are open (`too_many_streams`), or rate limited as every request; Retry-After says when to retry.',
          ),
          headers: {
            'Retry-After': {
              schema: { type: 'integer', format: 'int32', minimum: 1, maximum: 86_400 },
              description: 'Seconds to wait.',
            },
          },
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
      responses: {
        200: json(ref('SyncResponse'), 'Per-change results and the server changes after the cursor'),
        410: resp('Gone'),
        ...withBody,
      },
    },
  },
};
