import { body, bool, conflict, date, dateTime, int, ITEM_KINDS, ITEM_STATUSES, json, missing, noContent, noQuery, nullable, obj, op, optionalBody, params, ref, str, text, uuid } from './shared.js';

// Items of a meeting (talking points, actions, decisions): edit, reorder, carry.

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

export const itemSchema = obj({
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

export const itemsPaths = {
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
};
