import { streamOperation } from '@app/auth/streams';
import {
  common,
  dateTime,
  err,
  forbidden,
  badTimezone,
  ok,
  queryParams,
  readScope,
  ref,
  timezoneParam,
} from './shared.js';
import { changesQuerySchema, previewQuerySchema, streamQuerySchema } from '../domain/task.schemas.js';

/*
 * The changes feed, its live stream and the recurrence preview: their paths, response schemas
 * and the feed's consistency argument.
 */
export const changeSchema = {
  oneOf: [
    {
      type: 'object',
      additionalProperties: false,
      required: ['type', 'id', 'item'],
      properties: { type: { const: 'upsert' }, id: { type: 'string', format: 'uuid' }, item: ref('Task') },
    },
    {
      type: 'object',
      additionalProperties: false,
      required: ['type', 'id', 'item'],
      properties: { type: { const: 'delete' }, id: { type: 'string', format: 'uuid' }, item: { type: 'null' } },
    },
  ],
};

export const feedPaths = {
  '/api/v1/tasks/changes': {
    get: {
      operationId: 'listTaskChanges',
      summary: 'Sync: the tasks changed since a cursor',
      description: [
        'Without a cursor a full sync starts: every live task (top-level and subtasks, as plain Tasks) as an `upsert`. Then, with each `nextCursor`, every task changed since, once, in its latest state, in the order its writing transactions began; a deleted task (and each subtask deleted with it) is a `delete` with `item: null`. Creating, editing, completing (and the `next` task it creates), reopening, moving and deleting all appear.',
        '`hasMore: true`: call again now with `nextCursor`. `false`: this sync is complete; keep `nextCursor` for the next one (it may still hold a task that changed during paging, in its newer state: apply changes in order, last one wins). A page is at most 8 MiB of JSON: when `limit` changes would be more, it holds fewer and says `hasMore: true`.',
        'Consistency: every write stamps the task with its transaction id (`pg_current_xact_id()`, in the same statement). Each page is one statement that also takes the oldest transaction id still running (`pg_snapshot_xmin` of its snapshot). Every transaction below that line has ended, and every write not yet ended or still to come is stamped at or above it. The feed only hands out rows stamped below the line, in (transaction id, task id) order, and the cursor records how far it got. A transaction that commits late holds the line back (it delays the feed, it is never skipped), an aborted one leaves nothing, and a task written again after it was sent moves above the line and is sent again later in its newer state. So no committed change is ever missed and no uncommitted one is ever shown, without any lock or counter shared between writers.',
        "Cursors are bound to your workspace (another account's cursor is 400 `invalid_cursor`) and stay valid 30 days after the sync that issued them began; older: 410 `cursor_expired` (start again without a cursor). Tombstones are kept 31 days.",
      ].join('\n\n'),
      security: readScope,
      parameters: [...queryParams(changesQuerySchema), timezoneParam],
      responses: {
        '200': ok('a page of changes', {
          type: 'object',
          additionalProperties: false,
          required: ['changes', 'nextCursor', 'hasMore'],
          properties: {
            changes: { type: 'array', items: ref('Change') },
            nextCursor: { type: 'string' },
            hasMore: { type: 'boolean' },
          },
        }),
        '400': err(
          `\`validation_failed\` (limit; a list or search cursor), \`invalid_cursor\` (malformed, altered, or another workspace's), ${badTimezone}`,
        ),
        ...common,
        '403': forbidden,
        '410': err('`cursor_expired`: the cursor is older than 30 days; start a full sync without a cursor'),
      },
    },
  },
  '/api/v1/tasks/changes/stream': {
    get: streamOperation({
      operationId: 'streamTaskChanges',
      summary: 'Live: the changes feed pushed as Server-Sent Events',
      feed: 'GET /api/v1/tasks/changes',
      change: ref('Change'),
      cursorMaxLength: 4096,
      security: readScope,
      parameters: [...queryParams(streamQuerySchema), timezoneParam],
      responses: {
        '400': err(
          "`invalid_cursor` (malformed, altered, or another workspace's), `validation_failed` (a list or search cursor; an unreadable `filter`, path /filter with the position), " +
            badTimezone,
        ),
        ...common,
        '403': forbidden,
        '410': err('`cursor_expired`: the cursor is older than 30 days; start without a cursor'),
        '429': err(
          '`too_many_streams`: 10 streams of this account are open (`Retry-After` says when to try again), or `rate_limited` as on every request',
        ),
      },
      events: {
        about:
          "Besides the changes, the stream carries the workspace's reminders and due times as they fire, each once, to every stream of the workspace open then (on any replica): `event: reminder.fired` with `data:` `{ reminder, task }` at a reminder's `firesAt` (within 2 s), and `event: task.due` with the task at an open task's `dueAt` (within 2 s), the same data as the webhook events of those names. They have no `id:` (the `Last-Event-ID` a reconnect sends stays the last change's) and are live only: one that fires while no stream is open, or while a client reconnects, is not sent again (subscribe a webhook to `reminder.fired` or `task.due` to receive each one).",
        items: [
          {
            name: 'reminder.fired',
            description: '`{ reminder, task }`, as JSON on one line',
            data: {
              type: 'object',
              additionalProperties: false,
              required: ['reminder', 'task'],
              properties: { reminder: ref('Reminder'), task: ref('Task') },
            },
          },
          { name: 'task.due', description: 'The task, as JSON on one line', data: ref('Task') },
        ],
      },
    }),
  },
  '/api/v1/recurrence/preview': {
    get: {
      operationId: 'previewRecurrence',
      summary: 'The next occurrences of a recurrence rule',
      description:
        "The first `count` occurrences strictly after `from`, each the rule applied to the previous one, on the wall clock of X-Timezone or the account's zone (so `from`'s local time of day is kept across DST, except for `every N hours`). For `every!` and `after ...` rules `from` stands for the completion time.",
      security: readScope,
      parameters: [...queryParams(previewQuerySchema), timezoneParam],
      responses: {
        '200': ok('the rule as sent and its next occurrences (ISO 8601 UTC)', {
          type: 'object',
          additionalProperties: false,
          required: ['rule', 'occurrences'],
          properties: {
            rule: { type: 'string' },
            occurrences: { type: 'array', minItems: 1, maxItems: 20, items: dateTime },
          },
        }),
        '400': err(
          `\`validation_failed\`: details name \`/rule\` (missing, too long or unreadable), \`/from\` (not an ISO date-time on a real day) or \`/count\`; ${badTimezone}`,
        ),
        ...common,
        '403': forbidden,
      },
    },
  },
};
