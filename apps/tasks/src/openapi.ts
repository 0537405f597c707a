import { authOpenApiPaths } from '@app/auth/identity';
import {
  apiKeysTag,
  documentCommonHeaders,
  documentUriLimit,
  openapiLicense,
  openapiServers,
  securitySchemes,
  servicePortRoutes,
} from '@app/auth/runtime';
import { documentOutages } from '@app/http-errors';
import { LIMITS } from './domain/limits.js';
import { batchPaths } from './openapi/batch.js';
import { changeSchema, feedPaths } from './openapi/changes.js';
import { keyProperties, keysPaths } from './openapi/keys.js';
import { errorSchema } from './openapi/shared.js';
import {
  createTaskSchema,
  positionSchema,
  taskSchema,
  taskWithSubtasksSchema,
  updateTaskSchema,
} from './domain/task.schemas.js';
import { tasksPaths } from './openapi/tasks.js';
import { remindersPaths } from './openapi/reminders.js';
import { reminderSchema } from './domain/reminder.schemas.js';
import { webhooks } from './openapi/webhooks.js';

// The routes compile the request schemas from here (as before the document was split by resource).
export { IF_MATCH_MAX_LENGTH } from './openapi/shared.js';
export {
  changesQuerySchema,
  createTaskSchema,
  emptyBodySchema,
  listQuerySchema,
  positionSchema,
  previewQuerySchema,
  streamQuerySchema,
  updateTaskSchema,
} from './domain/task.schemas.js';
export { createReminderSchema } from './domain/reminder.schemas.js';

/*
 * The tasks service's OpenAPI 3.1 document, assembled from one file per resource under openapi/:
 * tasks.ts (the task operations), changes.ts (feed, stream, recurrence preview), keys.ts, with
 * domain/task.schemas.ts (the schemas the routes compile with ajv, so validation and documentation cannot
 * disagree) and shared.ts; webhooks and the account routes come from @app/auth. The test harness
 * checks every response against this document; test/openapi.test.ts holds the served document to
 * test/fixtures/openapi.json byte for byte.
 */

/** The tasks service's OpenAPI 3.1 document; request validation compiles the same schemas. */
export const openapiDocument = {
  openapi: '3.1.0',
  info: {
    title: 'Tasks API',
    version: '1.0.0',
    license: openapiLicense,
    description: [
      'Tasks in the caller\'s personal workspace. Decisions where the spec says "not shown":',
      '- Task ids are UUIDs. A path id that is not a UUID is 404 `not_found`, like a missing task.',
      '- Authentication: `Authorization: Bearer <API key>` (scopes `tasks:read` for GET, `tasks:write` for everything else) or the `tasks_sid` session cookie (every scope). Keys are managed with a session at /api/v1/keys.',
      '- Rate limit: RATE_LIMIT_PER_MINUTE (default 600) requests per account per minute (per client address before authentication), fixed window, shared across instances; 429 `rate_limited` with Retry-After and RateLimit headers.',
      `- Limits: no maximum number of tasks per workspace; at most ${LIMITS.subtasksPerParent} live subtasks per task (409 \`subtask_limit_reached\`); request bodies up to 256 KB; search ranks at most ${LIMITS.searchCandidates} matching tasks (the first found), so a very common word returns a bounded, still ranked and paginated, set - refine the query to see others.`,
      '- Strings containing the NUL character (\\u0000) are 400 `validation_failed`.',
      '- ETag: every single-task response carries `ETag: "<updatedAt>"`; If-Match is honoured on PATCH, DELETE, complete and reopen (not on position or auto-tag). Order of checks: 401, 403, 400, 404, 412, then 409/422.',
      '- Idempotency-Key (create): scoped to the workspace and the calling account; the same key with the same body replays the first 201 (same body, header `Idempotent-Replayed: true`) for 24 hours; with another body 409 `idempotency_key_conflict`; while the first request still runs 409 `idempotency_request_in_progress`. A create that fails (4xx/5xx) keeps nothing, so a corrected retry can reuse the key. Outside 1 to 200 characters: 400.',
      "- Views: `all` = every live top-level task, open and completed, in manual order, each with its subtasks and progress; `today` = open tasks of any level due before the start of tomorrow in the caller's time zone (overdue included); `upcoming` = open tasks due from the start of tomorrow; `completed` = completed tasks of any level. `today`, `upcoming` and `completed` are ordered by createdAt ascending, then id, and return plain Tasks. Tasks without a due time appear only in `all` (and `completed`).",
      '- Search (`q`): Postgres full-text search in websearch syntax ("quoted phrases", -exclusion, or) with English stemming over title (weighted higher) and notes; any live task (top-level or subtask) as a plain Task, ranked by relevance then id. A query of only stop words matches nothing.',
      '- Cursors are opaque and bound to their request: a search cursor on a list (or the reverse) is 400 `validation_failed`; a cursor of another view, tag or query, or an altered or malformed one, is 400 `invalid_cursor`; a changes-feed cursor on a list is 400 `validation_failed`.',
      "- Soft delete also deletes the task's subtasks. Deleted tasks are 404 everywhere except complete/reopen (409 `task_deleted`), and no list, search or count sees them; the changes feed (`GET /api/v1/tasks/changes`) reports them as `delete` for 31 days, then they are pruned. Restoring is not offered.",
      "- Complete: `next` is set only when the task has a recurrence. It is a new open task with the same title, notes, priority, tags, location, assignee, recurrence and parent, due at the rule's first occurrence strictly after the completed task's due time (for `every!` and `after ...` rules: counted from the completion's local date, or for hour steps from the completion instant), on the caller's wall clock (X-Timezone or the account's zone; 09:00 stays 09:00 across DST; monthly on the 31st falls on the month's last day). A recurring task without a due time repeats without one (`every!` / `after` rules: counted from the completion). `GET /api/v1/recurrence/preview` shows a rule's next occurrences. A top-level `next` is placed right after the completed task in the manual order; the completed task's live subtasks are copied, open, with due times shifted by the same amount. A recurring subtask repeats under the same parent (even at the subtask limit, so completing never fails on it).",
      '- Position: only top-level tasks move (a subtask: 409 `not_top_level`); `afterId` must name a live top-level task of the workspace (else 404); `afterId` equal to the task itself is 422 `after_self`. A move writes only the moved task; repeating it changes nothing (updatedAt unchanged). New top-level tasks join the end of the order.',
      '- auto-tag needs `tasks:write`, honours no If-Match, and always answers `{ item, tagged: false }` with the unchanged task.',
      `- ${servicePortRoutes}`,
    ].join('\n'),
  },
  servers: openapiServers,
  security: [{ apiKey: [] }, { session: [] }],
  tags: [{ name: 'Tasks', description: "Tasks of the caller's personal workspace" }, webhooks.tag, apiKeysTag],
  components: {
    securitySchemes: securitySchemes('tasks', ['tasks:read', 'tasks:write', 'webhooks']),
    schemas: {
      Task: taskSchema,
      TaskWithSubtasks: taskWithSubtasksSchema,
      TaskInput: createTaskSchema,
      TaskPatch: updateTaskSchema,
      Position: positionSchema,
      Reminder: reminderSchema,
      Error: errorSchema,
      Change: changeSchema,
      Key: {
        type: 'object',
        additionalProperties: false,
        required: Object.keys(keyProperties),
        properties: keyProperties,
      },
      ...webhooks.schemas,
    },
  },
  // Each event a subscription can receive, with its body's schema and an example.
  webhooks: webhooks.events,
  paths: {
    ...webhooks.paths,
    // Sign-up, login, logout and the account (shared by the three services, in this envelope).
    ...authOpenApiPaths('tasks'),
    ...tasksPaths,
    ...remindersPaths,
    ...batchPaths,
    ...feedPaths,
    ...keysPaths,
  },
} as const;

// Every operation that needs the database documents its outage answer (503 with Retry-After).
documentOutages(openapiDocument);
// ...and the rate-limit and CORS headers of every API answer.
// After the common headers: the gateway's 414 carries none of them.
documentUriLimit(documentCommonHeaders(openapiDocument));
