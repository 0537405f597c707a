import { date, dateTime, ITEM_KINDS, nullable, text, uuid } from './schema-values.js';

// The request schemas of a meeting's items (the routes compile them; the domain's types and the document come from them).

export const itemCreateBody = {
  type: 'object',
  additionalProperties: false,
  required: ['kind', 'text'],
  description:
    'Appends an OPEN item at the end of its list. parentId (a top-level item of the same meeting) makes a nested item; nesting is one level deep. 200 items per meeting (409 item_limit_reached).',
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
    "`{ parkingLot: true }`: the series' undated DRAFT meeting, created or reused. targetMeetingId with parkingLot: true is 400.",
  properties: {
    targetMeetingId: uuid,
    parkingLot: {
      type: 'boolean',
      description: 'true carries to the parking lot; false is the same as leaving it out',
    },
  },
} as const;

export const reorderBody = {
  type: 'object',
  additionalProperties: false,
  required: ['meetingId', 'itemIds'],
  description:
    'itemIds must name every top-level item of the meeting exactly once, in the new order; anything else (missing, extra, repeated or nested ids) is 409 reorder_conflict.',
  properties: {
    meetingId: uuid,
    itemIds: { type: 'array', maxItems: 400, items: uuid },
  },
} as const;
