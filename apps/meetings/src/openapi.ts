import { authOpenApiPaths, createKeyBodySchema, keyLastUsedAtSchema } from '@app/auth/identity';
import { apiKeysTag, documentCommonHeaders, withApiKeyScopes, openapiLicense, openapiServers, operationalPaths, operationsTag, securitySchemes } from '@app/auth/runtime';
import { webhookOpenApi } from '@app/auth/webhooks';
import { streamOperation } from '@app/auth/streams';
import { documentOutages, errorEnvelopeSchema } from '@app/http-errors';
import { uuidSchema } from '@app/http-errors/validation';
/**
 * The meetings service's OpenAPI 3.1 document. Request schemas are exported as consts and
 * compiled by the routes (ajv, once at module load); the document below embeds the very same
 * objects, so validation and documentation cannot disagree.
 */

import { MEETING_EVENTS } from './domain/events.js';

const webhooks = webhookOpenApi('/api/webhooks', MEETING_EVENTS);


const text = (maxLength: number, minLength = 0, description?: string) => ({
  type: 'string',
  minLength,
  maxLength,
  ...(description ? { description } : {}),
});
const uuid = uuidSchema;
const date = { type: 'string', format: 'date', maxLength: 10, description: 'A real calendar date, YYYY-MM-DD' } as const;
const dateTime = { type: 'string', format: 'date-time', maxLength: 40 } as const;
const nullable = (schema: object) => ({ anyOf: [schema, { type: 'null' }] });
const flag = (description: string) => ({ type: 'string', enum: ['0', '1'], description });
const limit = (max: number, fallback: number) => ({ type: 'integer', format: 'int32', minimum: 1, maximum: max, default: fallback, description: `Page size, 1 to ${max} (default ${fallback})` });
const cursor = { type: 'string', maxLength: 500, description: 'The nextCursor of the previous page; a malformed cursor is 400 invalid_cursor' } as const;
const revision = { type: 'integer', format: 'int32', minimum: 1, maximum: 2147483647 } as const;

const CADENCES = ['WEEKLY', 'BIWEEKLY', 'MONTHLY'] as const;
const MEETING_STATUSES = ['DRAFT', 'SCHEDULED', 'IN_PROGRESS', 'COMPLETED', 'SKIPPED'] as const;
const ITEM_KINDS = ['TALKING_POINT', 'ACTION', 'DECISION'] as const;
const ITEM_STATUSES = ['OPEN', 'CARRIED'] as const;
const startTime = { type: 'string', maxLength: 5, pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$', description: 'Local wall-clock time HH:MM (24-hour)' } as const;

// ---- request bodies ---------------------------------------------------------------------

export const notePutBody = {
  type: 'object',
  additionalProperties: false,
  description:
    'Creates or replaces the note of that date: fields left out become empty ("" or []). ' +
    'A live note is only updated with baseRevision equal to its revision (missing or stale: 409 revision_conflict with `current`). ' +
    'A missing or soft-deleted date is (re)created without baseRevision; its revision continues from the deleted one so revisions of a date never repeat. ' +
    'baseRevision sent for a date that never had a note is 409 revision_conflict with current null.',
  properties: {
    yesterday: text(50000),
    today: text(50000),
    impediments: { type: 'array', maxItems: 50, items: text(2000), description: 'Up to 50 strings of up to 2,000 characters' },
    todayPriority: text(500, 0, 'Free text, up to 500 characters'),
    baseRevision: revision,
  },
} as const;

export const personCreateBody = {
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: {
    name: text(200, 1),
    email: nullable({ type: 'string', format: 'email', maxLength: 320 }),
  },
} as const;

export const personPatchBody = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  description: '`archived: false` restores an archived person (subject to the 100 active people limit); `archived: true` archives, like DELETE.',
  properties: {
    name: text(200, 1),
    email: nullable({ type: 'string', format: 'email', maxLength: 320 }),
    archived: { type: 'boolean' },
  },
} as const;

const participantIds = {
  type: 'array',
  maxItems: 20,
  uniqueItems: true,
  items: uuid,
  description: 'Up to 20 distinct ids of existing, non-archived people of the account (unknown: 404 person_not_found; archived: 409 person_archived)',
} as const;

export const seriesCreateBody = {
  type: 'object',
  additionalProperties: false,
  required: ['title', 'cadence', 'startTime', 'durationMinutes', 'timezone', 'startDate'],
  description:
    'WEEKLY and BIWEEKLY need weekday (and refuse monthDay); MONTHLY needs monthDay (and refuses weekday): otherwise 400. ' +
    'The next two occurrences on or after max(startDate, today in the series time zone) are materialized as SCHEDULED meetings. ' +
    'BIWEEKLY counts fortnights from the first matching weekday on or after startDate. ' +
    'A start time that does not exist on a spring-forward day moves forward by the gap (02:30 becomes 03:30); an ambiguous one (fall-back) resolves to its second occurrence, in standard time.',
  properties: {
    title: text(200, 1),
    cadence: { type: 'string', enum: CADENCES },
    weekday: { type: 'integer', format: 'int32', minimum: 0, maximum: 6, description: '0 (Sunday) to 6 (Saturday)' },
    monthDay: { type: 'integer', format: 'int32', minimum: 1, maximum: 31, description: 'Clamped to the last day of shorter months' },
    startTime,
    durationMinutes: { type: 'integer', format: 'int32', minimum: 1, maximum: 1440 },
    timezone: { type: 'string', minLength: 1, maxLength: 100, description: 'IANA time zone name; unknown is 400' },
    startDate: date,
    participantIds,
  },
} as const;

export const seriesPatchBody = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  description:
    'Partial update of an active series (archived: 409 series_archived). The cadence and startDate are fixed at creation. ' +
    'weekday applies to WEEKLY/BIWEEKLY and monthDay to MONTHLY series (otherwise 400); they shape occurrences materialized from now on. ' +
    'Changing startTime or timezone re-times every SCHEDULED occurrence dated today or later (in the series time zone).',
  properties: {
    title: text(200, 1),
    weekday: { type: 'integer', format: 'int32', minimum: 0, maximum: 6 },
    monthDay: { type: 'integer', format: 'int32', minimum: 1, maximum: 31 },
    startTime,
    durationMinutes: { type: 'integer', format: 'int32', minimum: 1, maximum: 1440 },
    timezone: { type: 'string', minLength: 1, maxLength: 100 },
    participantIds,
  },
} as const;

export const meetingCreateBody = {
  type: 'object',
  additionalProperties: false,
  required: ['seriesId', 'date'],
  description:
    'Adds a SCHEDULED occurrence to an active series on any date (an ad-hoc or moved meeting need not fall on the cadence). ' +
    'startTime defaults to the series start time. One meeting per series and date (409 meeting_exists). privateNotes: sessions only (403 private_notes_forbidden for API keys).',
  properties: {
    seriesId: uuid,
    date,
    startTime,
    sharedNotes: text(50000),
    privateNotes: text(50000),
  },
} as const;

export const meetingPatchBody = {
  type: 'object',
  additionalProperties: false,
  required: ['baseRevision'],
  description:
    'Partial update; baseRevision must equal the current revision (else 409 revision_conflict with `current`). ' +
    'status moves: SCHEDULED -> IN_PROGRESS; SCHEDULED or IN_PROGRESS -> COMPLETED or SKIPPED; sending the current status is a no-op; ' +
    'any other move (and any change of a parking lot\'s DRAFT) is 409 invalid_status_transition. privateNotes: sessions only (403 private_notes_forbidden for API keys). ' +
    'Each successful PATCH increments revision by 1; adding or changing items does not.',
  properties: {
    baseRevision: revision,
    status: { type: 'string', enum: MEETING_STATUSES },
    sharedNotes: text(50000),
    privateNotes: text(50000),
  },
} as const;

export const itemCreateBody = {
  type: 'object',
  additionalProperties: false,
  required: ['kind', 'text'],
  description: 'Appends an OPEN item at the end of its list. parentId (a top-level item of the same meeting) makes a nested item; nesting is one level deep. 200 items per meeting (409 item_limit_reached).',
  properties: {
    kind: { type: 'string', enum: ITEM_KINDS },
    text: text(2000, 1),
    notes: text(20000),
    starred: { type: 'boolean' },
    owner: nullable(text(200)),
    dueDate: nullable(date),
    completedAt: nullable(dateTime),
    parentId: uuid,
  },
} as const;

export const itemPatchBody = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    kind: { type: 'string', enum: ITEM_KINDS },
    owner: nullable(text(200)),
    dueDate: nullable(date),
    completedAt: nullable(dateTime),
    text: text(2000, 1),
    notes: text(20000),
    starred: { type: 'boolean' },
  },
} as const;

export const carryItemBody = {
  type: 'object',
  additionalProperties: false,
  description:
    '`{}`: the earliest SCHEDULED or IN_PROGRESS occurrence dated after the source meeting (for a parking-lot item: dated today or later), ' +
    'else the next occurrence of the series rule after every existing occurrence is materialized. ' +
    '`{ targetMeetingId }`: a SCHEDULED or IN_PROGRESS occurrence of the same series dated after the source (404 target_not_found if missing, 409 invalid_carry_target otherwise). ' +
    '`{ parkingLot: true }`: the series\' undated DRAFT meeting, created or reused. targetMeetingId with parkingLot: true is 400.',
  properties: {
    targetMeetingId: uuid,
    parkingLot: { type: 'boolean', description: 'true carries to the parking lot; false is the same as leaving it out' },
  },
} as const;

export const carryMeetingBody = {
  type: 'object',
  additionalProperties: false,
  description:
    '`{}`: the earliest SCHEDULED or IN_PROGRESS occurrence dated after the source, or the series parking lot when there is none (nothing is materialized). ' +
    '`{ targetMeetingId }`: as for carrying one item. `{ parkingLot: true }` is also accepted. Every OPEN top-level TALKING_POINT moves in its order, in one transaction.',
  properties: {
    targetMeetingId: uuid,
    parkingLot: { type: 'boolean' },
  },
} as const;

export const reorderBody = {
  type: 'object',
  additionalProperties: false,
  required: ['meetingId', 'itemIds'],
  description: 'itemIds must name every top-level item of the meeting exactly once, in the new order; anything else (missing, extra, repeated or nested ids) is 409 reorder_conflict.',
  properties: {
    meetingId: uuid,
    itemIds: { type: 'array', maxItems: 400, items: uuid },
  },
} as const;

// ---- query strings ----------------------------------------------------------------------

const includePrivate = flag('1 includes privateNotes for browser sessions; API keys never get them, whatever this says');

export const notesQuery = {
  type: 'object',
  properties: {
    limit: limit(500, 100),
    cursor,
    changedSince: {
      ...dateTime,
      description:
        'Sync mode: notes changed strictly after this instant, oldest change first, soft-deleted notes included as tombstones (deletedAt set). ' +
        'Without it: live notes, newest date first.',
    },
  },
} as const;

export const peopleQuery = {
  type: 'object',
  properties: { limit: limit(500, 100), cursor, includeArchived: flag('1 includes archived people') },
} as const;

export const seriesQuery = {
  type: 'object',
  properties: { limit: limit(500, 100), cursor, includeArchived: flag('1 includes archived series') },
} as const;

export const meetingsQuery = {
  type: 'object',
  properties: {
    limit: limit(500, 100),
    cursor,
    seriesId: uuid,
    status: { type: 'string', enum: MEETING_STATUSES },
    from: { ...date, description: 'Occurrences dated on or after (parking lots are then left out)' },
    to: { ...date, description: 'Occurrences dated on or before (parking lots are then left out)' },
    includePrivate,
  },
} as const;

export const meetingReadQuery = {
  type: 'object',
  properties: { includePrivate },
} as const;

export const actionsQuery = {
  type: 'object',
  properties: {
    personId: { ...uuid, description: 'Actions of meetings whose series has this participant (unknown: empty list)' },
    openOnly: flag('1 returns only actions whose completedAt is null'),
    dueAfter: { ...date, description: 'dueDate on or after (actions without dueDate are then left out)' },
    dueBefore: { ...date, description: 'dueDate on or before (actions without dueDate are then left out)' },
    limit: limit(200, 100),
  },
} as const;

export const searchQuery = {
  type: 'object',
  required: ['q'],
  properties: {
    q: { ...text(200, 1), description: 'Case-insensitive substring; % and _ match themselves' },
    scope: { type: 'string', enum: ['notes', 'meetings', 'actions', 'all'], default: 'all' },
    personId: { ...uuid, description: 'Only meetings and items of series with this participant; daily notes are left out' },
    from: { ...date, description: 'Meeting or note date on or after (undated parking lots are then left out)' },
    to: { ...date, description: 'Meeting or note date on or before' },
    openOnly: flag('1 with scope=actions: only actions whose completedAt is null; ignored with other scopes'),
    limit: limit(100, 50),
    includePrivate: flag('1 lets a browser session search privateNotes; never for API keys'),
  },
} as const;

// ---- responses --------------------------------------------------------------------------

const obj = (properties: Record<string, object>, description?: string) => ({
  type: 'object',
  additionalProperties: false,
  required: Object.keys(properties),
  properties,
  ...(description ? { description } : {}),
});
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const str = { type: 'string' } as const;
const int = { type: 'integer' } as const;
const bool = { type: 'boolean' } as const;

const itemSchema = obj({
  id: str,
  meetingId: str,
  parentId: nullable(str),
  kind: { enum: ITEM_KINDS },
  text: str,
  notes: str,
  starred: bool,
  owner: nullable(str),
  dueDate: nullable(date),
  completedAt: nullable(dateTime),
  status: { enum: ITEM_STATUSES },
  carryCount: int,
  provenance: nullable(obj({ fromItemId: str, fromMeetingId: str, carriedAt: dateTime })),
  position: int,
  createdAt: dateTime,
  updatedAt: dateTime,
});

const meetingProps = {
  id: str,
  seriesId: str,
  date: nullable(date),
  startsAt: nullable(dateTime),
  status: { enum: MEETING_STATUSES },
  sharedNotes: str,
  revision: int,
  createdAt: dateTime,
  updatedAt: dateTime,
};
const meetingSchema = {
  ...obj(meetingProps, 'date and startsAt are null for the parking lot. privateNotes appears only for browser sessions (on reads with includePrivate=1, and on their own writes), never for API keys.'),
  properties: { ...meetingProps, privateNotes: str },
};

const previousSchema = nullable(obj({
  meetingId: str,
  date: date,
  sharedNotes: str,
  discussedPoints: { type: 'array', items: ref('Item'), description: 'Talking points of that meeting that were not carried forward' },
  decisions: { type: 'array', items: ref('Item') },
  openActions: { type: 'array', items: ref('Item'), description: 'Its actions whose completedAt is still null' },
}, 'The latest COMPLETED meeting of the same series dated before this one; null when none, and always null for a parking lot'));

const meetingDetailSchema = {
  ...meetingSchema,
  required: [...meetingSchema.required, 'items', 'previous'],
  properties: {
    ...meetingSchema.properties,
    items: { type: 'array', items: ref('Item'), description: 'Top-level items by position, each followed by its nested items' },
    previous: previousSchema,
  },
};

const noteSchema = obj({
  date,
  yesterday: str,
  today: str,
  impediments: { type: 'array', items: str },
  todayPriority: str,
  revision: int,
  createdAt: dateTime,
  updatedAt: dateTime,
  deletedAt: nullable(dateTime),
}, 'deletedAt is set only on tombstones listed by changedSince');

const personSchema = obj({ id: str, name: str, email: nullable(str), archived: bool, archivedAt: nullable(dateTime), createdAt: dateTime, updatedAt: dateTime });

const seriesSchema = obj({
  id: str,
  title: str,
  cadence: { enum: CADENCES },
  weekday: nullable(int),
  monthDay: nullable(int),
  startTime: str,
  durationMinutes: int,
  timezone: str,
  startDate: date,
  participantIds: { type: 'array', items: str },
  archived: bool,
  archivedAt: nullable(dateTime),
  createdAt: dateTime,
  updatedAt: dateTime,
});

const actionSchema = {
  ...itemSchema,
  required: [...itemSchema.required, 'meeting', 'person'],
  properties: {
    ...itemSchema.properties,
    meeting: obj({ id: str, date: nullable(date), seriesId: str, title: str }, 'The meeting holding the action; title is the series title'),
    person: nullable(obj({ id: str, name: str }, 'The filtered person, else the series\' first participant; null when the series has none')),
  },
};

const searchResultSchema = obj({
  type: { enum: ['meeting', 'item', 'note'] },
  id: { type: 'string', description: 'Meeting id, item id, or the note\'s date (a note is keyed by its date)' },
  date: nullable(date),
  personName: nullable(str),
  title: { type: 'string', description: 'Series title for meetings, item text for items, "Daily note YYYY-MM-DD" for notes' },
  snippet: { type: 'string', description: 'About 40 characters either side of the first match, with … where cut' },
  matchField: { enum: ['sharedNotes', 'privateNotes', 'text', 'notes', 'yesterday', 'today', 'impediments', 'todayPriority'] },
  meetingId: nullable(str),
  kind: nullable({ enum: ITEM_KINDS }),
  status: nullable({ enum: ITEM_STATUSES }),
  completedAt: nullable(dateTime),
  personId: nullable(str),
});

const page = (itemRef: string) => obj({ items: { type: 'array', items: ref(itemRef) }, nextCursor: nullable(str) }, 'Keyset page: pass nextCursor as cursor for the next one; null on the last page');

const errorSchema = errorEnvelopeSchema('rich', { current: 'On a 409 revision conflict: the server record (no privateNotes for API keys)' });

const keySchema = obj({ id: str, name: nullable(str), prefix: str, scopes: { type: 'array', items: str }, createdAt: dateTime, revokedAt: nullable(dateTime), lastUsedAt: keyLastUsedAtSchema });

// ---- operations -------------------------------------------------------------------------

const json = (schema: object, description = 'OK') => ({ description, content: { 'application/json': { schema } } });
const error = (description: string) => json(ref('Error'), description);
const conflictWithCurrent = (current: object, description: string) =>
  json({ allOf: [ref('Error'), { type: 'object', properties: { current } }] }, description);

const common = {
  '400': error('Invalid input (validation_failed, invalid_json, invalid_cursor; an unknown X-Timezone is validation_failed with the path X-Timezone)'),
  '401': error('Missing, invalid or revoked key or session'),
  '403': error('Missing scope (insufficient_scope), a session from a foreign Origin (cross_origin), or privateNotes sent by an API key (private_notes_forbidden)'),
  '404': error('No such record for this account (a malformed id is also 404)'),
  '413': error('Body over 128 KB'),
  '429': error('Rate limited: 120 reads and 120 writes per account per minute, counted separately, and the network-level cap of 180 API requests per minute per client address (whoever the caller; counted before authentication, shared by every instance). Retry-After says when to retry; RateLimit-* headers describe the window.'),
};

function op(tag: string, operationId: string, summary: string, ok: Record<string, object>, extra: Record<string, object> = {}, more: object = {}) {
  return { operationId, tags: [tag], summary, ...more, responses: { ...ok, ...common, ...extra } };
}
/** The key routes take a browser session only (an API key is 403 session_required). */
const sessionOnly = { security: [{ session: [] }] };
const body = (schema: object) => ({ requestBody: { required: true, content: { 'application/json': { schema } } } });
const optionalBody = (schema: object) => ({ requestBody: { required: false, content: { 'application/json': { schema } } } });
function params(query: { properties: Record<string, object>; required?: readonly string[] }, path: string[] = []) {
  return {
    parameters: [
      // Path ids are UUIDs and path dates YYYY-MM-DD; anything else (longer included) is 404.
      ...path.map((name) => ({ name, in: 'path', required: true, schema: { type: 'string', maxLength: 36 } })),
      ...Object.entries(query.properties).map(([name, schema]) => ({ name, in: 'query', required: query.required?.includes(name) ?? false, schema })),
    ],
  };
}
const noQuery = { properties: {} };
const noContent = { '204': { description: 'Done; no body' } };
const conflict = (description: string) => ({ '409': error(description) });
/** A 404 that names a record besides the path's own (`not_found`): a code of its own. */
const missing = (description: string) => ({ '404': error(`No such record for this account (not_found), or ${description}`) });


// ---- the changes feed and its stream --------------------------------------------------------

export const changesQuery = {
  type: 'object',
  properties: {
    cursor: { type: 'string', minLength: 1, maxLength: 500, description: 'The nextCursor of the previous page (or a stream event id); none: start a full sync' },
    limit: limit(500, 100),
    includePrivate,
  },
} as const;

const kinds = ['note', 'person', 'series', 'meeting'] as const;
const meetingWithItems = {
  ...meetingSchema,
  required: [...meetingSchema.required, 'items'],
  properties: { ...meetingSchema.properties, items: meetingDetailSchema.properties.items },
};
const changeSchema = {
  oneOf: [
    { ...obj({ type: { const: 'upsert' }, kind: { const: 'note' }, id: { ...date, description: 'The note\'s date' }, item: ref('Note') }) },
    { ...obj({ type: { const: 'upsert' }, kind: { const: 'person' }, id: uuid, item: ref('Person') }) },
    { ...obj({ type: { const: 'upsert' }, kind: { const: 'series' }, id: uuid, item: ref('Series') }) },
    { ...obj({ type: { const: 'upsert' }, kind: { const: 'meeting' }, id: uuid, item: meetingWithItems }) },
    { ...obj({ type: { const: 'delete' }, kind: { enum: ['note', 'meeting'] }, id: { type: 'string', maxLength: 36, description: 'A meeting\'s id, or a note\'s date' }, item: { type: 'null' } }) },
  ],
};
const cursorErrors = {
  '400': error('invalid_cursor (malformed, altered, or another account\'s cursor), validation_failed (limit)'),
  '410': error('cursor_expired: the cursor is older than 30 days; start a full sync without a cursor'),
};
const changesPaths = {
  '/api/changes': {
    get: op('Sync', 'listChanges', 'Sync: the notes, people, series and meetings changed since a cursor', {
      '200': json(obj({ changes: { type: 'array', maxItems: 500, items: ref('Change') }, nextCursor: { type: 'string', maxLength: 500 }, hasMore: bool })),
    }, cursorErrors, {
      description: [
        `Without a cursor a full sync starts: every note, person, series and meeting (${kinds.join(', ')}) as an \`upsert\`, a meeting with its items in reading order (as GET returns it, without \`previous\`). Then, with each \`nextCursor\`, every record changed since, once, in its latest state, in commit order. A soft-deleted note or meeting is a \`delete\` with \`item: null\` (a note's id is its date); archiving a person or series is an upsert (\`archived: true\`). Adding, editing, moving, carrying or deleting an item is an upsert of its meeting.`,
        '`hasMore: true`: call again now with `nextCursor`. `false`: this sync is complete; keep `nextCursor` for the next one.',
        'Consistency: the tasks feed\'s. Every write stamps its record with its transaction id in the writing statement; a page only hands out records stamped below the oldest transaction still running when it was read, so a change that commits late is delivered later, never missed, and nothing uncommitted is shown.',
        'Cursors are bound to your account and stay valid 30 days after the sync that issued them began (410 cursor_expired after; deleted notes and meetings are kept as tombstones). privateNotes: only for a browser session that asks with includePrivate=1, never for an API key.',
      ].join('\n\n'),
      ...params(changesQuery),
    }),
  },
  '/api/changes/stream': {
    get: streamOperation({
      operationId: 'streamChanges',
      tags: ['Sync'],
      summary: 'Live: the changes feed pushed as Server-Sent Events',
      feed: 'GET /api/changes',
      change: ref('Change'),
      cursorMaxLength: 500,
      security: [{ apiKey: ['meetings:read'] }, { session: [] }],
      responses: { ...common, ...cursorErrors, '429': error('too_many_streams: 10 streams of this account are open (Retry-After says when to try again), or a rate limit as on every request') },
    }),
  },
};

export const openapiDocument = {
  openapi: '3.1.0',
  info: {
    title: 'Meetings API',
    version: '1.0.0',
    license: openapiLicense,
    description:
      'Daily notes, people, 1:1 series, meetings, items, actions and search for one account. Authenticate with `Authorization: Bearer <API key>` ' +
      '(scopes meetings:read for GET, meetings:write for everything else) or a `meetings_sid` browser session. ' +
      'privateNotes are for browser sessions only: never returned to, written by or searched for API keys. ' +
      'Errors: `{ error: { code, message, requestId, details? } }`; a 409 revision conflict adds `current` (the server record) at `current` and `error.current`. ' +
      'A NUL character (U+0000) in any string, body or query, is 400 validation_failed (the one input check every service runs). ' +
      'Ids are UUIDs; every record of another account is 404. Per-account limits answer 409 with a distinct code: ' +
      'note_limit_reached (5,000 live notes), person_limit_reached (100 active people), series_limit_reached (50 active series), ' +
      'meeting_limit_reached (5,000 meetings not deleted), item_limit_reached (200 items per meeting).',
  },
  servers: openapiServers,
  security: [{ apiKey: [] }, { session: [] }],
  tags: [
    { name: 'Account', description: 'The caller\'s account' },
    { name: 'Notes', description: 'Daily notes, one per date' },
    { name: 'People', description: 'The people the account meets' },
    { name: 'Series', description: 'Recurring 1:1 series; creating one materializes its next meetings' },
    { name: 'Meetings', description: 'Occurrences of a series, and each series\' undated parking lot' },
    { name: 'Items', description: 'Talking points, actions and decisions of a meeting, and carrying them forward' },
    { name: 'Actions', description: 'Open action items across meetings' },
    { name: 'Search', description: 'Substring search over meetings, items and notes' },
    { name: 'Sync', description: 'Every change of the account, as a resumable feed and as a live stream' },
    apiKeysTag,
    webhooks.tag,
    operationsTag,
  ],
  paths: {
    ...webhooks.paths,
    ...changesPaths,
    // Sign-up, login, logout and the account (shared by the three services, in this envelope).
    ...authOpenApiPaths('meetings'),
    ...operationalPaths,
    '/api/me/keys': {
      get: op('API keys', 'listApiKeys', 'List the account\'s API keys (browser sessions only; an API key gets 403 session_required)', { '200': json(obj({ items: { type: 'array', items: ref('ApiKey') } })) }, {}, sessionOnly),
      post: op('API keys', 'createApiKey', 'Create an API key; the secret is shown once (browser sessions only)', {
        '201': json({ ...keySchema, required: [...keySchema.required, 'key'], properties: { ...keySchema.properties, key: str } }, 'Created'),
      }, {}, { ...sessionOnly, ...optionalBody(createKeyBodySchema) }),
    },
    '/api/me/keys/{id}': {
      delete: op('API keys', 'revokeApiKey', 'Revoke an API key (browser sessions only)', { '200': json(obj({ id: str, revoked: bool })) }, {}, { ...sessionOnly, ...params(noQuery, ['id']) }),
    },
    '/api/me': {
      get: op('Account', 'getMe', 'The account behind the key or session', {
        '200': json(obj({
          accountId: str,
          email: str,
          timezone: { type: 'string', description: 'The X-Timezone header when sent (an unknown zone is 400 validation_failed), else the account\'s time zone' },
          authenticatedBy: { enum: ['key', 'session'] },
          scopes: { type: 'array', items: str, description: 'The key\'s scopes; a session holds every scope' },
        })),
      }),
    },
    '/api/notes': {
      get: op('Notes', 'listNotes', 'List daily notes (keyset pages of at most 500), or changes since an instant', { '200': json(page('Note')) }, {}, params(notesQuery)),
    },
    '/api/notes/{date}': {
      put: op('Notes', 'putNote', 'Create or update the daily note of a date (a date that is not a real YYYY-MM-DD date is 400)', {
        '200': json(ref('Note'), 'Updated'),
        '201': json(ref('Note'), 'Created, or recreated after a soft delete'),
      }, {
        '409': conflictWithCurrent(nullable(ref('Note')), 'revision_conflict (baseRevision missing or stale; current is the server note) or note_limit_reached (5,000 live notes)'),
      }, { ...params(noQuery, ['date']), ...body(notePutBody) }),
      delete: op('Notes', 'deleteNote', 'Soft-delete the note of a date (its revision increments; changedSince lists it as a tombstone)', noContent, {}, params(noQuery, ['date'])),
    },
    '/api/people': {
      get: op('People', 'listPeople', 'List people (oldest first; archived ones only with includeArchived=1)', { '200': json(page('Person')) }, {}, params(peopleQuery)),
      post: op('People', 'createPerson', 'Create a person', { '201': json(ref('Person'), 'Created') }, conflict('person_limit_reached (100 active people)'), body(personCreateBody)),
    },
    '/api/people/{id}': {
      patch: op('People', 'updatePerson', 'Update a person; archived: false restores', { '200': json(ref('Person')) }, conflict('person_limit_reached when restoring beyond 100 active people'), { ...params(noQuery, ['id']), ...body(personPatchBody) }),
      delete: op('People', 'archivePerson', 'Archive a person (idempotent; series keep them as participants)', { '200': json(ref('Person')) }, {}, params(noQuery, ['id'])),
    },
    '/api/series': {
      get: op('Series', 'listSeries', 'List series (oldest first; archived ones only with includeArchived=1)', { '200': json(page('Series')) }, {}, params(seriesQuery)),
      post: op('Series', 'createSeries', 'Create a series and materialize its next two occurrences', {
        '201': json(obj({ series: ref('Series'), meetings: { type: 'array', items: ref('Meeting') } }), 'Created: the series and its two SCHEDULED meetings'),
      }, { ...conflict('series_limit_reached (50 active series), meeting_limit_reached, person_archived'), ...missing('person_not_found: a participantId names no person of this account') }, body(seriesCreateBody)),
    },
    '/api/series/{id}': {
      patch: op('Series', 'updateSeries', 'Update a series', { '200': json(ref('Series')) }, { ...conflict('series_archived, person_archived'), ...missing('person_not_found: a participantId names no person of this account') }, { ...params(noQuery, ['id']), ...body(seriesPatchBody) }),
      delete: op('Series', 'archiveSeries', 'Archive a series (idempotent): no new meetings or carries into it; its meetings stay', { '200': json(ref('Series')) }, {}, params(noQuery, ['id'])),
    },
    '/api/meetings': {
      get: op('Meetings', 'listMeetings', 'List meetings by date (parking lots last), keyset pages of at most 500', { '200': json(page('Meeting')) }, {}, params(meetingsQuery)),
      post: op('Meetings', 'createMeeting', 'Create a SCHEDULED meeting in a series', { '201': json(ref('Meeting'), 'Created') }, { ...conflict('meeting_exists, series_archived, meeting_limit_reached (5,000)'), ...missing('series_not_found: seriesId names no series of this account') }, body(meetingCreateBody)),
    },
    '/api/meetings/{id}': {
      get: op('Meetings', 'getMeeting', 'Read a meeting with its items and the previous completed meeting', { '200': json(ref('MeetingDetail')) }, {}, params(meetingReadQuery, ['id'])),
      patch: op('Meetings', 'updateMeeting', 'Partial update with baseRevision', { '200': json(ref('Meeting')) }, {
        '409': conflictWithCurrent(ref('Meeting'), 'revision_conflict (current: the server meeting, without privateNotes for API keys) or invalid_status_transition'),
      }, { ...params(noQuery, ['id']), ...body(meetingPatchBody) }),
      delete: op('Meetings', 'deleteMeeting', 'Soft-delete a meeting (its items disappear with it)', noContent, {}, params(noQuery, ['id'])),
    },
    '/api/meetings/{id}/items': {
      post: op('Items', 'createItem', 'Add an item to a meeting', { '201': json(ref('Item'), 'Created') }, { ...conflict('item_limit_reached (200 per meeting), nesting_too_deep (parentId names a nested item)'), ...missing('parent_not_found: parentId names no item of this meeting') }, { ...params(noQuery, ['id']), ...body(itemCreateBody) }),
    },
    '/api/meetings/{id}/carry': {
      post: op('Meetings', 'carryMeeting', 'Carry every open top-level talking point of a COMPLETED or SKIPPED meeting', {
        '200': json(obj({ meeting: ref('Meeting'), items: { type: 'array', items: ref('Item') } }), 'The target meeting (never with privateNotes) and the new copies (possibly none)'),
      }, { ...conflict('meeting_not_finished, series_archived, invalid_carry_target, item_limit_reached'), ...missing('target_not_found: targetMeetingId names no meeting of this account') }, { ...params(noQuery, ['id']), ...optionalBody(carryMeetingBody) }),
    },
    '/api/items/reorder': {
      post: op('Items', 'reorderItems', 'Set the exact order of a meeting\'s top-level items', {
        '200': json(obj({ meetingId: str, items: { type: 'array', items: ref('Item') } }), 'The top-level items in their new order'),
      }, conflict('reorder_conflict'), body(reorderBody)),
    },
    '/api/items/{id}': {
      patch: op('Items', 'updateItem', 'Partial update of an item', { '200': json(ref('Item')) }, {}, { ...params(noQuery, ['id']), ...body(itemPatchBody) }),
      delete: op('Items', 'deleteItem', 'Delete an item permanently (with its nested items)', noContent, {}, params(noQuery, ['id'])),
    },
    '/api/items/{id}/carry': {
      post: op('Items', 'carryItem', 'Carry one open top-level talking point', {
        '200': json(obj({ meeting: ref('Meeting'), item: ref('Item') }), 'The target meeting (never with privateNotes) and the copy; the source is now CARRIED'),
      }, { ...conflict('not_carryable (not a top-level OPEN talking point, e.g. already carried), series_archived, invalid_carry_target, already_in_parking_lot, item_limit_reached, meeting_limit_reached'), ...missing('target_not_found: targetMeetingId names no meeting of this account') }, {
        ...params(noQuery, ['id']),
        ...optionalBody(carryItemBody),
      }),
    },
    '/api/actions': {
      get: op('Actions', 'listActions', 'List open-status ACTION items across meetings, by dueDate (none last), then creation', {
        '200': json(obj({ actions: { type: 'array', items: ref('Action') }, hasMore: bool }), 'Items carried forward (status CARRIED) are left out: their copy is listed'),
      }, {}, params(actionsQuery)),
    },
    '/api/search': {
      get: op('Search', 'search', 'Search meetings, items and daily notes', {
        '200': json(obj({ results: { type: 'array', items: ref('SearchResult') }, hasMore: bool }), 'Meetings, then items, then notes; newest first within each; limit counts the union'),
      }, {}, params(searchQuery)),
    },
  },
  components: {
    securitySchemes: securitySchemes('meetings', ['meetings:read', 'meetings:write', 'webhooks']),
    schemas: {
      ...webhooks.schemas,
      Error: errorSchema,
      ApiKey: keySchema,
      Note: noteSchema,
      Person: personSchema,
      Series: seriesSchema,
      Meeting: meetingSchema,
      MeetingDetail: meetingDetailSchema,
      Item: itemSchema,
      Action: actionSchema,
      SearchResult: searchResultSchema,
      Change: changeSchema,
    },
  },
} as const;

// Every operation that needs the database documents its outage answer (503 with Retry-After).
documentOutages(openapiDocument);
// A key needs meetings:read for GET and meetings:write for everything else (the MCP tools follow this).
withApiKeyScopes(openapiDocument, (method) => [method === 'get' ? 'meetings:read' : 'meetings:write']);
// ...and the rate-limit and CORS headers of every API answer.
documentCommonHeaders(openapiDocument);
