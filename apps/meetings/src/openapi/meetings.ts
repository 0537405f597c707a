import { itemCreateBody } from './items.js';
import { body, conflict, conflictWithCurrent, cursor, date, dateTime, includePrivate, int, json, limit, MEETING_STATUSES, missing, noContent, noQuery, nullable, obj, op, optionalBody, page, params, ref, revision, startTime, str, text, uuid } from './shared.js';

// Meetings: occurrences of a series, and each series' parking lot.

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
export const meetingSchema = {
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

export const meetingDetailSchema = {
  ...meetingSchema,
  required: [...meetingSchema.required, 'items', 'previous'],
  properties: {
    ...meetingSchema.properties,
    items: { type: 'array', items: ref('Item'), description: 'Top-level items by position, each followed by its nested items' },
    previous: previousSchema,
  },
};

export const meetingsPaths = {
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
};
