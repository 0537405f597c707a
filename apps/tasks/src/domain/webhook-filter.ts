import type { WebhookFilter } from '@app/auth/webhooks';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { FILTER_MAX_LENGTH, parseFilter } from './filter.js';
import { matchTasks } from './filter.match.js';
import type { Task } from './tasks.service.js';

/** What the `filter` of a task webhook subscription says (create, PATCH, the subscription's schema). */
const DESCRIPTION =
  `A filter expression, the grammar of \`GET /api/v1/tasks?filter=\` (1 to ${FILTER_MAX_LENGTH} characters): an event is ` +
  'sent only when the task it carries matches it (`reminder.fired`: its `task`; `task.deleted`: the task as it was), ' +
  "its dates in the account's time zone at the event's time (`timestamp`). As in the list, a completed task matches " +
  'only an expression that names `completed` (e.g. `#work & (completed | !completed)` also sends `task.completed`). ' +
  'Unreadable text is 400 `validation_failed` (path `/filter`, the 1-based position in the message).';

/** The task an event carries: `reminder.fired`'s `{ reminder, task }` carries it as `task`, the others are the task. */
export const taskOf = (type: string, data: unknown): Task =>
  (type === 'reminder.fired' ? (data as { task: Task }).task : data) as Task;

/**
 * The tasks service's filter of its webhook events (see WebhookFilter): the subscription's
 * expression over each event's task, in memory (one statement a batch for `search:` terms).
 */
export const taskWebhookFilter: WebhookFilter = {
  field: { maxLength: FILTER_MAX_LENGTH, description: DESCRIPTION },
  check: (text) => void parseFilter(text),
  matches: (db, text, events, zone) =>
    matchTasks(
      db as Kysely<Database>,
      text,
      events.map((e) => ({ task: taskOf(e.type, e.data), atMillis: Date.parse(e.timestamp) })),
      zone,
    ),
};
