import { carryItemBody, itemPatchBody, reorderBody } from '../domain/items.schemas.js';
import {
  body,
  bool,
  conflict,
  date,
  dateTime,
  error,
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
  linkedTask: {
    ...nullable(obj({ id: str, completedAt: nullable(dateTime) })),
    description:
      'The task an action was sent to (POST /api/items/{id}/send-to-tasks) and its completion, kept in step with tasks; null before it is sent and once the task is deleted',
  },
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
      {
        description:
          'On an action sent to tasks (linkedTask set), a completedAt that marks it done completes the task, and null reopens it, within 5 s.',
        ...params(noQuery, ['id']),
        ...body(itemPatchBody),
      },
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
  '/api/items/{id}/send-to-tasks': {
    post: op(
      'Items',
      'sendItemToTasks',
      'Send an action to the connected tasks account',
      {
        '200': json(
          ref('Item'),
          "The item with linkedTask. The task's title is the action's text (cut to 500 characters), its notes the series' title, the meeting's date and a link to the meeting, its dueAt 17:00 on the action's dueDate in the account's time zone (left out when that is past). Sent with an Idempotency-Key derived from the item, so a retry or a second click makes one task; an item already linked is answered as it is, without calling tasks.",
        ),
      },
      {
        ...conflict(
          'not_an_action (the item is not an ACTION), not_connected (no tasks account connected, or tasks no longer accepts the connection), tasks_refused (tasks answered the create with a 4xx, named in the message)',
        ),
        '503': error(
          'Tasks did not answer (or answered 5xx): nothing was created or linked; Retry-After says when to try again',
        ),
      },
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
