import { itemCreateBody } from '../domain/items.schemas.js';
import {
  carryMeetingBody,
  meetingCreateBody,
  meetingPatchBody,
  meetingReadQuery,
  meetingsQuery,
} from '../domain/meetings.schemas.js';
import {
  body,
  conflict,
  conflictWithCurrent,
  date,
  dateTime,
  int,
  json,
  MEETING_STATUSES,
  missing,
  noContent,
  noQuery,
  nullable,
  obj,
  op,
  optionalBody,
  page,
  params,
  ref,
  str,
} from './shared.js';

// Meetings: occurrences of a series, and each series' parking lot.

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
  ...obj(
    meetingProps,
    'date and startsAt are null for the parking lot. privateNotes appears only for browser sessions (on reads with includePrivate=1, and on their own writes), never for API keys.',
  ),
  properties: { ...meetingProps, privateNotes: str },
};

const previousSchema = nullable(
  obj(
    {
      meetingId: str,
      date: date,
      sharedNotes: str,
      discussedPoints: {
        type: 'array',
        items: ref('Item'),
        description: 'Talking points of that meeting that were not carried forward',
      },
      decisions: { type: 'array', items: ref('Item') },
      openActions: { type: 'array', items: ref('Item'), description: 'Its actions whose completedAt is still null' },
    },
    'The latest COMPLETED meeting of the same series dated before this one; null when none, and always null for a parking lot',
  ),
);

export const meetingDetailSchema = {
  ...meetingSchema,
  required: [...meetingSchema.required, 'items', 'previous'],
  properties: {
    ...meetingSchema.properties,
    items: {
      type: 'array',
      items: ref('Item'),
      description: 'Top-level items by position, each followed by its nested items',
    },
    previous: previousSchema,
  },
};

export const meetingsPaths = {
  '/api/meetings': {
    get: op(
      'Meetings',
      'listMeetings',
      'List meetings by date (parking lots last), keyset pages of at most 500',
      { '200': json(page('Meeting')) },
      {},
      params(meetingsQuery),
    ),
    post: op(
      'Meetings',
      'createMeeting',
      'Create a SCHEDULED meeting in a series',
      { '201': json(ref('Meeting'), 'Created') },
      {
        ...conflict('meeting_exists, series_archived, meeting_limit_reached (5,000)'),
        ...missing('series_not_found: seriesId names no series of this account'),
      },
      body(meetingCreateBody),
    ),
  },
  '/api/meetings/{id}': {
    get: op(
      'Meetings',
      'getMeeting',
      'Read a meeting with its items and the previous completed meeting',
      { '200': json(ref('MeetingDetail')) },
      {},
      params(meetingReadQuery, ['id']),
    ),
    patch: op(
      'Meetings',
      'updateMeeting',
      'Partial update with baseRevision',
      { '200': json(ref('Meeting')) },
      {
        '409': conflictWithCurrent(
          ref('Meeting'),
          'revision_conflict (current: the server meeting, without privateNotes for API keys) or invalid_status_transition',
        ),
      },
      { ...params(noQuery, ['id']), ...body(meetingPatchBody) },
    ),
    delete: op(
      'Meetings',
      'deleteMeeting',
      'Soft-delete a meeting (its items disappear with it)',
      noContent,
      {},
      params(noQuery, ['id']),
    ),
  },
  '/api/meetings/{id}/items': {
    post: op(
      'Items',
      'createItem',
      'Add an item to a meeting',
      { '201': json(ref('Item'), 'Created') },
      {
        ...conflict('item_limit_reached (200 per meeting), nesting_too_deep (parentId names a nested item)'),
        ...missing('parent_not_found: parentId names no item of this meeting'),
      },
      { ...params(noQuery, ['id']), ...body(itemCreateBody) },
    ),
  },
  '/api/meetings/{id}/carry': {
    post: op(
      'Meetings',
      'carryMeeting',
      'Carry every open top-level talking point of a COMPLETED or SKIPPED meeting',
      {
        '200': json(
          obj({ meeting: ref('Meeting'), items: { type: 'array', items: ref('Item') } }),
          'The target meeting (never with privateNotes) and the new copies (possibly none)',
        ),
      },
      {
        ...conflict('meeting_not_finished, series_archived, invalid_carry_target, item_limit_reached'),
        ...missing('target_not_found: targetMeetingId names no meeting of this account'),
      },
      { ...params(noQuery, ['id']), ...optionalBody(carryMeetingBody) },
    ),
  },
};
