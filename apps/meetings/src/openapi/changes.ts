import { changesQuery } from '../domain/changes.schemas.js';
import { streamOperation } from '@app/auth/streams';
import { meetingDetailSchema, meetingSchema } from './meetings.js';
import { bool, common, date, error, json, obj, op, params, ref, uuid } from './shared.js';

// The changes feed and its stream.

const kinds = ['note', 'person', 'series', 'meeting'] as const;
const meetingWithItems = {
  ...meetingSchema,
  required: [...meetingSchema.required, 'items'],
  properties: { ...meetingSchema.properties, items: meetingDetailSchema.properties.items },
};
export const changeSchema = {
  oneOf: [
    {
      ...obj({
        type: { const: 'upsert' },
        kind: { const: 'note' },
        id: { ...date, description: "The note's date" },
        item: ref('Note'),
      }),
    },
    { ...obj({ type: { const: 'upsert' }, kind: { const: 'person' }, id: uuid, item: ref('Person') }) },
    { ...obj({ type: { const: 'upsert' }, kind: { const: 'series' }, id: uuid, item: ref('Series') }) },
    { ...obj({ type: { const: 'upsert' }, kind: { const: 'meeting' }, id: uuid, item: meetingWithItems }) },
    {
      ...obj({
        type: { const: 'delete' },
        kind: { enum: ['note', 'meeting'] },
        id: { type: 'string', maxLength: 36, description: "A meeting's id, or a note's date" },
        item: { type: 'null' },
      }),
    },
  ],
};
const cursorErrors = {
  '400': error("invalid_cursor (malformed, altered, or another account's cursor), validation_failed (limit)"),
  '410': error('cursor_expired: the cursor is older than 30 days; start a full sync without a cursor'),
};
export const changesPaths = {
  '/api/changes': {
    get: op(
      'Sync',
      'listChanges',
      'Sync: the notes, people, series and meetings changed since a cursor',
      {
        '200': json(
          obj({
            changes: { type: 'array', maxItems: 500, items: ref('Change') },
            nextCursor: { type: 'string', maxLength: 500 },
            hasMore: bool,
          }),
        ),
      },
      cursorErrors,
      {
        description: [
          `Without a cursor a full sync starts: every note, person, series and meeting (${kinds.join(', ')}) as an \`upsert\`, a meeting with its items in reading order (as GET returns it, without \`previous\`). Then, with each \`nextCursor\`, every record changed since, once, in its latest state, in commit order. A soft-deleted note or meeting is a \`delete\` with \`item: null\` (a note's id is its date); archiving a person or series is an upsert (\`archived: true\`). Adding, editing, moving, carrying or deleting an item is an upsert of its meeting.`,
          '`hasMore: true`: call again now with `nextCursor`. `false`: this sync is complete; keep `nextCursor` for the next one. A page is at most 8 MiB of JSON: when `limit` changes would be more (a meeting holds up to 200 items, a note 200,500 characters), it holds fewer and says `hasMore: true`.',
          "Consistency: the tasks feed's. Every write stamps its record with its transaction id in the writing statement; a page only hands out records stamped below the oldest transaction still running when it was read, so a change that commits late is delivered later, never missed, and nothing uncommitted is shown.",
          'Cursors are bound to your account and stay valid 30 days after the sync that issued them began (410 cursor_expired after; deleted notes and meetings are kept as tombstones). privateNotes: only for a browser session that asks with includePrivate=1, never for an API key.',
        ].join('\n\n'),
        ...params(changesQuery),
      },
    ),
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
      responses: {
        ...common,
        ...cursorErrors,
        '429': error(
          'too_many_streams: 10 streams of this account are open (Retry-After says when to try again), or a rate limit as on every request',
        ),
      },
    }),
  },
};
