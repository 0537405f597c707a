import { carryItemBody, itemPatchBody, reorderBody } from '../domain/items.schemas.js';
import {
  body,
  bool,
  conflict,
  date,
  dateTime,
  int,
  ITEM_KINDS,
  ITEM_STATUSES,
  json,
  missing,
  noContent,
  noQuery,
  nullable,
  obj,
  op,
  optionalBody,
  params,
  ref,
  str,
} from './shared.js';

// Items of a meeting (talking points, actions, decisions): edit, reorder, carry.

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
    post: op(
      'Items',
      'reorderItems',
      "Set the exact order of a meeting's top-level items",
      {
        '200': json(
          obj({ meetingId: str, items: { type: 'array', items: ref('Item') } }),
          'The top-level items in their new order',
        ),
      },
      conflict('reorder_conflict'),
      body(reorderBody),
    ),
  },
  '/api/items/{id}': {
    patch: op(
      'Items',
      'updateItem',
      'Partial update of an item',
      { '200': json(ref('Item')) },
      {},
      { ...params(noQuery, ['id']), ...body(itemPatchBody) },
    ),
    delete: op(
      'Items',
      'deleteItem',
      'Delete an item permanently (with its nested items)',
      noContent,
      {},
      params(noQuery, ['id']),
    ),
  },
  '/api/items/{id}/carry': {
    post: op(
      'Items',
      'carryItem',
      'Carry one open top-level talking point',
      {
        '200': json(
          obj({ meeting: ref('Meeting'), item: ref('Item') }),
          'The target meeting (never with privateNotes) and the copy; the source is now CARRIED',
        ),
      },
      {
        ...conflict(
          'not_carryable (not a top-level OPEN talking point, e.g. already carried), series_archived, invalid_carry_target, already_in_parking_lot, item_limit_reached, meeting_limit_reached',
        ),
        ...missing('target_not_found: targetMeetingId names no meeting of this account'),
      },
      {
        ...params(noQuery, ['id']),
        ...optionalBody(carryItemBody),
      },
    ),
  },
};
