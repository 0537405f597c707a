import {
  cursor,
  date,
  includePrivate,
  limit,
  MEETING_STATUSES,
  revision,
  startTime,
  text,
  uuid,
} from './schema-values.js';

// The request schemas of meetings (the routes compile them; the domain's types and the document come from them).

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
    "any other move (and any change of a parking lot's DRAFT) is 409 invalid_status_transition. privateNotes: sessions only (403 private_notes_forbidden for API keys). " +
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
