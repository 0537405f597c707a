import { authOpenApiPaths, createKeyBodySchema, keyIdParameter, keyLastUsedAtSchema } from '@app/auth/identity';
import { apiKeysTag, documentCommonHeaders, openapiLicense, openapiServers, operationalPaths, operationsTag, securitySchemes } from '@app/auth/runtime';
import { streamOperation } from '@app/auth/streams';
import { webhookOpenApi } from '@app/auth/webhooks';
import { documentOutages, errorEnvelopeSchema } from '@app/http-errors';
import { idPathParameter } from '@app/http-errors/validation';
import { DUE_AT_PATTERN } from './domain/due-time.js';
import { RECURRENCE_FORMS } from './domain/recurrence.js';
import { LIMITS, TASK_EVENTS } from './domain/tasks.service.js';

const webhooks = webhookOpenApi('/api/v1/webhooks', TASK_EVENTS);

/*
 * The tasks service's OpenAPI 3.1 document. The request schemas below are the ones the routes
 * compile with ajv, so validation and documentation cannot disagree; the test harness checks
 * every response against this document.
 */

/** The longest If-Match header taken (a list of a few dozen entity tags); longer is 400. */
export const IF_MATCH_MAX_LENGTH = 2048;

const nullable = (schema: Record<string, unknown>, type: string) => ({ ...schema, type: [type, 'null'] });
const dateTime = { type: 'string', format: 'date-time', description: 'ISO 8601 instant in UTC with `Z` (microsecond precision when not zero)' };

const taskInputProperties = {
  title: { type: 'string', minLength: 1, maxLength: 500, pattern: '\\S', description: '1 to 500 characters, not only white space' },
  notes: nullable({ maxLength: 20000, description: 'at most 20000 characters' }, 'string'),
  priority: nullable({
    maxLength: 20,
    description: '`high`, `medium` or `low`. Another string (up to 20 characters) is 422 `invalid_priority`; a longer one, or a value that is not a string (or null), is 400.',
  }, 'string'),
  dueAt: nullable({
    maxLength: 64,
    pattern: DUE_AT_PATTERN,
    description:
      'ISO 8601 date-time with `Z` or `+hh:mm`/`-hh:mm` (seconds and fraction optional), on a real calendar day ' +
      '(2030-02-30T10:00:00Z is 400 `validation_failed`). Stored and returned in UTC. A time more than 60 seconds in ' +
      'the past is 422 `due_date_in_past`; on edit only a changed due time is checked, so sending back the current one works.',
  }, 'string'),
  tags: {
    type: 'array',
    maxItems: 50,
    items: { type: 'string', minLength: 1, maxLength: 50 },
    description: 'at most 50 tags of 1 to 50 characters; exact (case-sensitive) strings; duplicates are dropped, keeping the first',
  },
  parentId: nullable({
    format: 'uuid',
    maxLength: 36,
    description:
      'Makes the task a subtask. Must name a live top-level task of your workspace: missing, deleted or another ' +
      "workspace's is 404; a subtask is 422 `parent_is_subtask`; the task itself 422 `parent_is_self`; a parent with " +
      `${LIMITS.subtasksPerParent} subtasks 409 \`subtask_limit_reached\`. On edit, a task with subtasks cannot become a subtask ` +
      '(422 `task_has_subtasks`), and null makes a subtask top-level at the end of the manual order.',
  }, 'string'),
  recurrence: nullable({
    minLength: 1,
    maxLength: 50,
    description: `1 to 50 characters, case-insensitive; text the service cannot read is 400 \`validation_failed\` (path /recurrence). Understood: ${RECURRENCE_FORMS}.`,
  }, 'string'),
  location: nullable({ maxLength: 500, description: 'free-text place, at most 500 characters' }, 'string'),
  assigneeId: nullable({ minLength: 1, maxLength: 200, description: 'free string of 1 to 200 characters; not checked against any user directory' }, 'string'),
};

/** POST /api/v1/tasks body. */
export const createTaskSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['title'],
  properties: taskInputProperties,
  description: 'No other properties are accepted (goalId cannot be set: 400).',
};

/** PATCH /api/v1/tasks/{id} body: the same fields, all optional. */
export const updateTaskSchema = {
  type: 'object',
  additionalProperties: false,
  properties: taskInputProperties,
  description: 'Partial edit; no other properties are accepted. An empty object changes nothing (updatedAt stays).',
};

/** PUT /api/v1/tasks/{id}/position body. */
export const positionSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['afterId'],
  properties: { afterId: nullable({ format: 'uuid', maxLength: 36, description: 'the task to place this one right after; null moves it to the top' }, 'string') },
};

/** complete / reopen / auto-tag take no body: none, or an empty JSON object. */
export const emptyBodySchema = { type: 'object', additionalProperties: false, properties: {}, description: 'No body, or `{}`.' };

/** GET /api/v1/tasks query; unknown parameters are ignored. */
export const listQuerySchema = {
  type: 'object',
  properties: {
    limit: { type: 'integer', minimum: 1, maximum: 200, default: 50, description: '1 to 200 (0, 201, -1 or a non-integer is 400)' },
    cursor: { type: 'string', minLength: 1, maxLength: 4096, description: 'opaque `nextCursor` of a previous page' },
    view: { type: 'string', enum: ['today', 'upcoming', 'all', 'completed'], default: 'all', description: 'default all' },
    tag: { type: 'string', minLength: 1, maxLength: 50, description: 'only tasks carrying exactly this tag' },
    q: { type: 'string', minLength: 1, maxLength: 500, pattern: '\\S', description: 'full-text search; empty or only white space is 400' },
  },
};

/** GET /api/v1/tasks/changes query; unknown parameters are ignored. */
export const changesQuerySchema = {
  type: 'object',
  properties: {
    cursor: { type: 'string', minLength: 1, maxLength: 4096, description: 'the `nextCursor` of the previous call; none: start a full sync' },
    limit: { type: 'integer', minimum: 1, maximum: 500, default: 100, description: '1 to 500 changes per page (default 100)' },
  },
};

/** GET /api/v1/recurrence/preview query; unknown parameters are ignored. */
export const previewQuerySchema = {
  type: 'object',
  required: ['rule'],
  properties: {
    rule: { type: 'string', minLength: 1, maxLength: 50, description: `a recurrence text as a task would carry it (case-insensitive). Understood: ${RECURRENCE_FORMS}` },
    from: { type: 'string', maxLength: 40, pattern: DUE_AT_PATTERN, description: 'ISO 8601 date-time with `Z` or `+hh:mm` on a real calendar day; default now' },
    count: { type: 'integer', minimum: 1, maximum: 20, default: 5, description: '1 to 20 occurrences (default 5)' },
  },
};

const taskProperties = {
  id: { type: 'string', format: 'uuid' },
  title: { type: 'string' },
  notes: { type: ['string', 'null'] },
  priority: { type: ['string', 'null'], enum: ['high', 'medium', 'low', null] },
  dueAt: { ...dateTime, type: ['string', 'null'] },
  completedAt: { ...dateTime, type: ['string', 'null'] },
  tags: { type: 'array', items: { type: 'string' } },
  createdAt: dateTime,
  updatedAt: { ...dateTime, description: 'changes on every write, strictly increasing; its quoted value is the ETag and the If-Match version' },
  parentId: { type: ['string', 'null'], format: 'uuid' },
  goalId: { type: ['string', 'null'], description: 'always null: goals cannot be set through this API' },
  recurrence: { type: ['string', 'null'] },
  location: { type: ['string', 'null'] },
  assigneeId: { type: ['string', 'null'] },
};

const taskSchema = {
  type: 'object',
  additionalProperties: false,
  required: Object.keys(taskProperties),
  properties: taskProperties,
};

const taskWithSubtasksSchema = {
  type: 'object',
  additionalProperties: false,
  required: [...Object.keys(taskProperties), 'subtasks', 'progress'],
  properties: {
    ...taskProperties,
    subtasks: { type: 'array', items: { $ref: '#/components/schemas/Task' }, description: 'live subtasks, oldest first (a subtask has none)' },
    progress: {
      type: 'object',
      additionalProperties: false,
      required: ['completed', 'total', 'allComplete'],
      properties: {
        completed: { type: 'integer', minimum: 0 },
        total: { type: 'integer', minimum: 0 },
        allComplete: { type: 'boolean', description: 'true when there is at least one subtask and all are completed' },
      },
    },
  },
};

const errorSchema = errorEnvelopeSchema('rich');

const keyProperties = {
  id: { type: 'string', format: 'uuid' },
  name: { type: ['string', 'null'] },
  prefix: { type: 'string' },
  scopes: { type: 'array', items: { type: 'string', enum: ['tasks:read', 'tasks:write', 'webhooks'] } },
  createdAt: dateTime,
  revokedAt: { ...dateTime, type: ['string', 'null'] },
  lastUsedAt: keyLastUsedAtSchema,
};

const json = (schema: object) => ({ 'application/json': { schema } });
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const etag = { ETag: { description: 'the quoted updatedAt of the task', schema: { type: 'string' } } };
const ok = (description: string, schema: object, headers?: object) => ({ description, content: json(schema), ...(headers ? { headers } : {}) });
const err = (description: string) => ({ description, content: json(ref('Error')) });

const common = {
  '401': err('`unauthorized`: no valid API key or session'),
  '429': {
    description: `\`rate_limited\`: more than RATE_LIMIT_PER_MINUTE requests (default 600) per account per minute, shared by all instances through Redis`,
    content: json(ref('Error')),
  },
  '500': err('`internal_error`: a server fault (logged; nothing leaks)'),
};
const forbidden = err('`insufficient_scope` (the key lacks the scope) or `cross_origin` (a session from an origin not in ALLOWED_ORIGINS)');
const badBody = err('`validation_failed` (details give each JSON pointer), `invalid_json`');
const tooLarge = err('`payload_too_large`: body over BODY_LIMIT_BYTES (256 KB)');
const notFound = err('`not_found`: no such task in your workspace (missing, deleted, another workspace\'s, or an id that is not a UUID)');
const stale = err('`precondition_failed`: If-Match names another version; nothing was written');
const badTimezone = '`validation_failed` (path `X-Timezone`): X-Timezone is not an IANA time zone';

const idParam = idPathParameter('task id (UUID; anything else is 404)');
const ifMatchParam = {
  name: 'If-Match',
  in: 'header',
  required: false,
  schema: { type: 'string', maxLength: IF_MATCH_MAX_LENGTH },
  description:
    `Up to ${IF_MATCH_MAX_LENGTH} characters (longer: 400). ` +
    'The quoted updatedAt of the version you last saw (the ETag), `*` for any version, or a comma-separated list of them. ' +
    'Weak tags (`W/"..."`) never match (If-Match compares strongly): 412. A value that is not `*` or a list of quoted tags is 400.',
};
const timezoneParam = {
  name: 'X-Timezone',
  in: 'header',
  required: false,
  schema: { type: 'string', maxLength: 100 },
  description: 'IANA time zone for this request (default: the account\'s). Unknown: 400 `validation_failed` with the path `X-Timezone`, on every route (checked after the scope, before the body).',
};
const readScope = [{ apiKey: ['tasks:read'] }, { session: [] }];
const writeScope = [{ apiKey: ['tasks:write'] }, { session: [] }];

function taskOp(operationId: string, summary: string, description: string, opts: { write: boolean; body?: object; ifMatch?: boolean; extra?: Record<string, object>; item?: object }) {
  const responses: Record<string, object> = {
    '200': ok('the task', opts.item ?? { type: 'object', additionalProperties: false, required: ['item'], properties: { item: ref('Task') } }, etag),
    '400': opts.body ? err(`${badBody.description}; ${badTimezone}`) : err(badTimezone),
    ...common,
    '403': forbidden,
    '404': notFound,
    ...(opts.ifMatch ? { '412': stale } : {}),
    ...(opts.body ? { '413': tooLarge } : {}),
    ...opts.extra,
  };
  return {
    operationId,
    tags: ['Tasks'],
    summary,
    description,
    security: opts.write ? writeScope : readScope,
    parameters: [idParam, timezoneParam, ...(opts.ifMatch ? [ifMatchParam] : [])],
    ...(opts.body ? { requestBody: { required: false, content: json(opts.body) } } : {}),
    responses,
  };
}

const itemResponse = { type: 'object', additionalProperties: false, required: ['item'], properties: { item: ref('Task') } };

/*
 * The changes feed and the recurrence preview: kept in one block (their paths, response schemas
 * and the feed's consistency argument) so the rest of the document reads as before.
 */
const queryParams = (schema: { properties: Record<string, { description: string }>; required?: readonly string[] }) =>
  Object.entries(schema.properties).map(([name, s]) => ({ name, in: 'query', required: schema.required?.includes(name) ?? false, schema: s, description: s.description }));

const changeSchema = {
  oneOf: [
    { type: 'object', additionalProperties: false, required: ['type', 'id', 'item'], properties: { type: { const: 'upsert' }, id: { type: 'string', format: 'uuid' }, item: ref('Task') } },
    { type: 'object', additionalProperties: false, required: ['type', 'id', 'item'], properties: { type: { const: 'delete' }, id: { type: 'string', format: 'uuid' }, item: { type: 'null' } } },
  ],
};

const feedPaths = {
  '/api/v1/tasks/changes': {
    get: {
      operationId: 'listTaskChanges',
      summary: 'Sync: the tasks changed since a cursor',
      description: [
        'Without a cursor a full sync starts: every live task (top-level and subtasks, as plain Tasks) as an `upsert`. Then, with each `nextCursor`, every task changed since, once, in its latest state, in the order its writing transactions began; a deleted task (and each subtask deleted with it) is a `delete` with `item: null`. Creating, editing, completing (and the `next` task it creates), reopening, moving and deleting all appear.',
        '`hasMore: true`: call again now with `nextCursor`. `false`: this sync is complete; keep `nextCursor` for the next one (it may still hold a task that changed during paging, in its newer state: apply changes in order, last one wins).',
        'Consistency: every write stamps the task with its transaction id (`pg_current_xact_id()`, in the same statement). Each page is one statement that also takes the oldest transaction id still running (`pg_snapshot_xmin` of its snapshot). Every transaction below that line has ended, and every write not yet ended or still to come is stamped at or above it. The feed only hands out rows stamped below the line, in (transaction id, task id) order, and the cursor records how far it got. A transaction that commits late holds the line back (it delays the feed, it is never skipped), an aborted one leaves nothing, and a task written again after it was sent moves above the line and is sent again later in its newer state. So no committed change is ever missed and no uncommitted one is ever shown, without any lock or counter shared between writers.',
        'Cursors are bound to your workspace (another account\'s cursor is 400 `invalid_cursor`) and stay valid 30 days after the sync that issued them began; older: 410 `cursor_expired` (start again without a cursor). Tombstones are kept 31 days.',
      ].join('\n\n'),
      security: readScope,
      parameters: [...queryParams(changesQuerySchema), timezoneParam],
      responses: {
        '200': ok('a page of changes', {
          type: 'object',
          additionalProperties: false,
          required: ['changes', 'nextCursor', 'hasMore'],
          properties: { changes: { type: 'array', items: ref('Change') }, nextCursor: { type: 'string' }, hasMore: { type: 'boolean' } },
        }),
        '400': err(`\`validation_failed\` (limit; a list or search cursor), \`invalid_cursor\` (malformed, altered, or another workspace's), ${badTimezone}`),
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
      responses: {
        '400': err('`invalid_cursor` (malformed, altered, or another workspace\'s), `validation_failed` (a list or search cursor)'),
        ...common,
        '403': forbidden,
        '410': err('`cursor_expired`: the cursor is older than 30 days; start without a cursor'),
        '429': err('`too_many_streams`: 10 streams of this account are open (`Retry-After` says when to try again), or `rate_limited` as on every request'),
      },
    }),
  },
  '/api/v1/recurrence/preview': {
    get: {
      operationId: 'previewRecurrence',
      summary: 'The next occurrences of a recurrence rule',
      description: 'The first `count` occurrences strictly after `from`, each the rule applied to the previous one, on the wall clock of X-Timezone or the account\'s zone (so `from`\'s local time of day is kept across DST, except for `every N hours`). For `every!` and `after ...` rules `from` stands for the completion time.',
      security: readScope,
      parameters: [...queryParams(previewQuerySchema), timezoneParam],
      responses: {
        '200': ok('the rule as sent and its next occurrences (ISO 8601 UTC)', {
          type: 'object',
          additionalProperties: false,
          required: ['rule', 'occurrences'],
          properties: { rule: { type: 'string' }, occurrences: { type: 'array', minItems: 1, maxItems: 20, items: dateTime } },
        }),
        '400': err(`\`validation_failed\`: details name \`/rule\` (missing, too long or unreadable), \`/from\` (not an ISO date-time on a real day) or \`/count\`; ${badTimezone}`),
        ...common,
        '403': forbidden,
      },
    },
  },
};

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
      '- Views: `all` = every live top-level task, open and completed, in manual order, each with its subtasks and progress; `today` = open tasks of any level due before the start of tomorrow in the caller\'s time zone (overdue included); `upcoming` = open tasks due from the start of tomorrow; `completed` = completed tasks of any level. `today`, `upcoming` and `completed` are ordered by createdAt ascending, then id, and return plain Tasks. Tasks without a due time appear only in `all` (and `completed`).',
      '- Search (`q`): Postgres full-text search in websearch syntax ("quoted phrases", -exclusion, or) with English stemming over title (weighted higher) and notes; any live task (top-level or subtask) as a plain Task, ranked by relevance then id. A query of only stop words matches nothing.',
      '- Cursors are opaque and bound to their request: a search cursor on a list (or the reverse) is 400 `validation_failed`; a cursor of another view, tag or query, or an altered or malformed one, is 400 `invalid_cursor`; a changes-feed cursor on a list is 400 `validation_failed`.',
      '- Soft delete also deletes the task\'s subtasks. Deleted tasks are 404 everywhere except complete/reopen (409 `task_deleted`), and no list, search or count sees them; the changes feed (`GET /api/v1/tasks/changes`) reports them as `delete` for 31 days, then they are pruned. Restoring is not offered.',
      '- Complete: `next` is set only when the task has a recurrence. It is a new open task with the same title, notes, priority, tags, location, assignee, recurrence and parent, due at the rule\'s first occurrence strictly after the completed task\'s due time (for `every!` and `after ...` rules: counted from the completion\'s local date, or for hour steps from the completion instant), on the caller\'s wall clock (X-Timezone or the account\'s zone; 09:00 stays 09:00 across DST; monthly on the 31st falls on the month\'s last day). A recurring task without a due time repeats without one (`every!` / `after` rules: counted from the completion). `GET /api/v1/recurrence/preview` shows a rule\'s next occurrences. A top-level `next` is placed right after the completed task in the manual order; the completed task\'s live subtasks are copied, open, with due times shifted by the same amount. A recurring subtask repeats under the same parent (even at the subtask limit, so completing never fails on it).',
      '- Position: only top-level tasks move (a subtask: 409 `not_top_level`); `afterId` must name a live top-level task of the workspace (else 404); `afterId` equal to the task itself is 422 `after_self`. A move writes only the moved task; repeating it changes nothing (updatedAt unchanged). New top-level tasks join the end of the order.',
      '- auto-tag needs `tasks:write`, honours no If-Match, and always answers `{ item, tagged: false }` with the unchanged task.',
    ].join('\n'),
  },
  servers: openapiServers,
  security: [{ apiKey: [] }, { session: [] }],
  tags: [
    { name: 'Tasks', description: 'Tasks of the caller\'s personal workspace' },
    webhooks.tag,
    apiKeysTag,
    operationsTag,
  ],
  components: {
    securitySchemes: securitySchemes('tasks', ['tasks:read', 'tasks:write', 'webhooks']),
    schemas: {
      Task: taskSchema,
      TaskWithSubtasks: taskWithSubtasksSchema,
      TaskInput: createTaskSchema,
      TaskPatch: updateTaskSchema,
      Position: positionSchema,
      Error: errorSchema,
      Change: changeSchema,
      Key: { type: 'object', additionalProperties: false, required: Object.keys(keyProperties), properties: keyProperties },
      ...webhooks.schemas,
    },
  },
  paths: {
    ...webhooks.paths,
    // Sign-up, login, logout and the account (shared by the three services, in this envelope).
    ...authOpenApiPaths('tasks'),
    '/api/v1/tasks': {
      get: {
        operationId: 'listTasks',
        tags: ['Tasks'],
        summary: 'List tasks by view or tag, or search them',
        security: readScope,
        parameters: [
          ...Object.entries(listQuerySchema.properties).map(([name, schema]) => ({ name, in: 'query', required: false, schema, description: schema.description })),
          timezoneParam,
        ],
        responses: {
          '200': ok('a page of tasks: TaskWithSubtasks items for view=all, Tasks otherwise; nextCursor null on the last page', {
            type: 'object',
            additionalProperties: false,
            required: ['items', 'nextCursor'],
            properties: {
              items: { type: 'array', items: { anyOf: [ref('Task'), ref('TaskWithSubtasks')] } },
              nextCursor: { type: ['string', 'null'] },
            },
          }),
          '400': err(`\`validation_failed\` (a query parameter; a list cursor on a search or the reverse), \`invalid_cursor\`, ${badTimezone}`),
          ...common,
          '403': forbidden,
        },
      },
      post: {
        operationId: 'createTask',
        tags: ['Tasks'],
        summary: 'Create a task',
        security: writeScope,
        parameters: [
          { name: 'Idempotency-Key', in: 'header', required: false, schema: { type: 'string', minLength: 1, maxLength: 200 }, description: 'see the idempotency rules in the API description' },
          timezoneParam,
        ],
        requestBody: { required: true, content: json(ref('TaskInput')) },
        responses: {
          '201': ok('the created task (or, with `Idempotent-Replayed: true`, the replayed first result)', itemResponse, {
            ...etag,
            'Idempotent-Replayed': { schema: { type: 'string', enum: ['true'] } },
          }),
          '400': err(`${badBody.description}; Idempotency-Key length; ${badTimezone}`),
          ...common,
          '403': forbidden,
          '404': err('`not_found`: parentId names no live task of your workspace'),
          '409': err('`idempotency_key_conflict`, `idempotency_request_in_progress`, `subtask_limit_reached`'),
          '413': tooLarge,
          '422': err('`due_date_in_past`, `invalid_priority`, `parent_is_subtask`'),
        },
      },
    },
    '/api/v1/tasks/{id}': {
      get: taskOp('getTask', 'Get a task with its subtasks', 'Deleted tasks are 404.', {
        write: false,
        item: { type: 'object', additionalProperties: false, required: ['item'], properties: { item: ref('TaskWithSubtasks') } },
      }),
      patch: taskOp('updateTask', 'Edit a task', 'Partial edit; only the fields sent change.', {
        write: true,
        body: ref('TaskPatch'),
        ifMatch: true,
        extra: {
          '404': err('`not_found`: the task, or the parentId sent, names no live task of your workspace'),
          '409': err('`subtask_limit_reached`'),
          '422': err('`due_date_in_past`, `invalid_priority`, `parent_is_subtask`, `parent_is_self`, `task_has_subtasks`'),
        },
      }),
      delete: taskOp('deleteTask', 'Soft-delete a task (and its subtasks)', 'Returns the deleted task.', { write: true, ifMatch: true }),
    },
    '/api/v1/tasks/{id}/complete': {
      post: taskOp('completeTask', 'Complete a task', 'See the recurrence rules in the API description.', {
        write: true,
        ifMatch: true,
        body: emptyBodySchema,
        item: {
          type: 'object',
          additionalProperties: false,
          required: ['item', 'next'],
          properties: { item: ref('Task'), next: { anyOf: [ref('Task'), { type: 'null' }], description: 'the next occurrence of a recurring task, else null' } },
        },
        extra: { '409': err('`task_already_completed`, `task_deleted`') },
      }),
    },
    '/api/v1/tasks/{id}/reopen': {
      post: taskOp('reopenTask', 'Reopen a completed task', '', {
        write: true,
        ifMatch: true,
        body: emptyBodySchema,
        extra: { '409': err('`task_not_completed`, `task_deleted`') },
      }),
    },
    '/api/v1/tasks/{id}/auto-tag': {
      post: taskOp('autoTagTask', 'Automatic tagging (compatibility no-op)', 'Reads no task text, contacts nothing, changes nothing.', {
        write: true,
        body: emptyBodySchema,
        item: {
          type: 'object',
          additionalProperties: false,
          required: ['item', 'tagged'],
          properties: { item: ref('Task'), tagged: { const: false } },
        },
      }),
    },
    '/api/v1/tasks/{id}/position': {
      put: taskOp('moveTask', 'Move a top-level task in the manual order', 'Idempotent; writes only the moved task.', {
        write: true,
        body: ref('Position'),
        extra: {
          '404': err('`not_found`: the task, or afterId, names no live top-level task of your workspace'),
          '409': err('`not_top_level`: the task is a subtask'),
          '422': err('`after_self`: afterId is the task itself'),
        },
      }),
    },
    ...feedPaths,
    '/api/v1/keys': {
      get: {
        operationId: 'listApiKeys',
        tags: ['API keys'],
        summary: 'List the account\'s API keys (session only)',
        security: [{ session: [] }],
        responses: {
          '200': ok('keys, newest first, without secrets', { type: 'object', additionalProperties: false, required: ['items'], properties: { items: { type: 'array', items: ref('Key') } } }),
          ...common,
          '403': err('`session_required` (an API key) or `cross_origin`'),
        },
      },
      post: {
        operationId: 'createApiKey',
        tags: ['API keys'],
        summary: 'Create an API key (session only); the secret is shown once',
        security: [{ session: [] }],
        requestBody: {
          required: false,
          content: json(createKeyBodySchema),
        },
        responses: {
          '201': ok('the new key, with its secret', {
            type: 'object',
            additionalProperties: false,
            required: [...Object.keys(keyProperties), 'key'],
            properties: { ...keyProperties, key: { type: 'string' } },
          }),
          '400': badBody,
          ...common,
          '403': err('`session_required` (an API key) or `cross_origin`'),
          '413': tooLarge,
        },
      },
    },
    '/api/v1/keys/{id}': {
      delete: {
        operationId: 'revokeApiKey',
        tags: ['API keys'],
        summary: 'Revoke an API key (session only)',
        security: [{ session: [] }],
        parameters: [keyIdParameter],
        responses: {
          '200': ok('revoked', { type: 'object', additionalProperties: false, required: ['id', 'revoked'], properties: { id: { type: 'string' }, revoked: { const: true } } }),
          ...common,
          '403': err('`session_required` (an API key) or `cross_origin`'),
          '404': err('`not_found`: no such key of this account'),
        },
      },
    },
    ...operationalPaths,
  },
} as const;

// Every operation that needs the database documents its outage answer (503 with Retry-After).
documentOutages(openapiDocument);
// ...and the rate-limit and CORS headers of every API answer.
documentCommonHeaders(openapiDocument);
