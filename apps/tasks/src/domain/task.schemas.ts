import { DATE_TIME_PATTERN } from '@app/http-errors/validation';
import { RECURRENCE_FORMS } from './recurrence.js';
import { LIMITS } from './limits.js';
import { FILTER_DESCRIPTION, FILTER_MAX_LENGTH } from './filter.js';

/** `schema` that also takes null; generic so a schema declared `as const` keeps its literal types. */
const nullable = <const S extends object, const T extends string>(schema: S, type: T) => ({
  ...schema,
  type: [type, 'null'] as const,
});
export const dateTime = {
  type: 'string',
  format: 'date-time',
  description: 'ISO 8601 instant in UTC with `Z` (microsecond precision when not zero)',
} as const;

/*
 * The task's request and response schemas, in the domain: its types are derived from them, and the
 * document (openapi/) imports them. The request schemas are the ones the routes compile
 * with ajv, so validation and documentation cannot disagree; the test harness checks every
 * response against the document.
 */

const taskInputProperties = {
  title: {
    type: 'string',
    minLength: 1,
    maxLength: 500,
    pattern: '\\S',
    description: '1 to 500 characters, not only white space',
  },
  notes: nullable({ maxLength: 20000, description: 'at most 20000 characters' }, 'string'),
  priority: nullable(
    {
      maxLength: 20,
      description:
        '`high`, `medium` or `low`. Another string (up to 20 characters) is 422 `invalid_priority`; a longer one, or a value that is not a string (or null), is 400.',
    },
    'string',
  ),
  dueAt: nullable(
    {
      maxLength: 64,
      format: 'date-time',
      pattern: DATE_TIME_PATTERN,
      description:
        'ISO 8601 date-time with `Z` or `+hh:mm`/`-hh:mm` within 14:00 (seconds and fraction optional), on a real calendar day ' +
        '(2030-02-30T10:00:00Z is 400 `validation_failed`). Stored and returned in UTC. A time more than 60 seconds in ' +
        'the past is 422 `due_date_in_past`; on edit only a changed due time is checked, so sending back the current one works.',
    },
    'string',
  ),
  tags: {
    type: 'array',
    maxItems: 50,
    items: { type: 'string', minLength: 1, maxLength: 50 },
    description:
      'at most 50 tags of 1 to 50 characters; exact (case-sensitive) strings; duplicates are dropped, keeping the first',
  },
  parentId: nullable(
    {
      format: 'uuid',
      maxLength: 36,
      description:
        'Makes the task a subtask. Must name a live top-level task of your workspace: missing, deleted or another ' +
        "workspace's is 404; a subtask is 422 `parent_is_subtask`; the task itself 422 `parent_is_self`; a parent with " +
        `${LIMITS.subtasksPerParent} subtasks 409 \`subtask_limit_reached\`. On edit, a task with subtasks cannot become a subtask ` +
        '(422 `task_has_subtasks`), and null makes a subtask top-level at the end of the manual order.',
    },
    'string',
  ),
  recurrence: nullable(
    {
      minLength: 1,
      maxLength: 50,
      description: `1 to 50 characters, case-insensitive; text the service cannot read is 400 \`validation_failed\` (path /recurrence). Understood: ${RECURRENCE_FORMS}.`,
    },
    'string',
  ),
  location: nullable({ maxLength: 500, description: 'free-text place, at most 500 characters' }, 'string'),
  assigneeId: nullable(
    {
      minLength: 1,
      maxLength: 200,
      description: 'free string of 1 to 200 characters; not checked against any user directory',
    },
    'string',
  ),
} as const;

/** POST /api/v1/tasks body. */
export const createTaskSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['title'],
  properties: taskInputProperties,
  description: 'No other properties are accepted (goalId cannot be set: 400).',
} as const;

/** PATCH /api/v1/tasks/{id} body: the same fields, all optional. */
export const updateTaskSchema = {
  type: 'object',
  additionalProperties: false,
  properties: taskInputProperties,
  description: 'Partial edit; no other properties are accepted. An empty object changes nothing (updatedAt stays).',
} as const;

/** PUT /api/v1/tasks/{id}/position body. */
export const positionSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['afterId'],
  properties: {
    afterId: nullable(
      {
        format: 'uuid',
        maxLength: 36,
        description: 'the task to place this one right after; null moves it to the top',
      },
      'string',
    ),
  },
} as const;

/** complete / reopen / auto-tag take no body: none, or an empty JSON object. */
export const emptyBodySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {},
  description: 'No body, or `{}`.',
} as const;

/** GET /api/v1/tasks query; unknown parameters are ignored. */
export const listQuerySchema = {
  type: 'object',
  properties: {
    limit: {
      type: 'integer',
      minimum: 1,
      maximum: 200,
      default: 50,
      description:
        '1 to 200 (0, 201, -1 or a non-integer is 400). A page is also at most 8 MiB of JSON: it holds fewer tasks when they would be more, and gives a nextCursor for the rest',
    },
    cursor: { type: 'string', minLength: 1, maxLength: 4096, description: 'opaque `nextCursor` of a previous page' },
    view: {
      type: 'string',
      enum: ['today', 'upcoming', 'all', 'completed'],
      default: 'all',
      description: 'default all',
    },
    tag: { type: 'string', minLength: 1, maxLength: 50, description: 'only tasks carrying exactly this tag' },
    q: {
      type: 'string',
      minLength: 1,
      maxLength: 500,
      pattern: '\\S',
      description: 'full-text search; empty or only white space is 400',
    },
    filter: {
      type: 'string',
      minLength: 1,
      maxLength: FILTER_MAX_LENGTH,
      description: FILTER_DESCRIPTION,
    },
  },
} as const;

/** GET /api/v1/tasks/changes/stream query, besides its start point (`cursor`, read by the stream); unknown parameters are ignored. */
export const streamQuerySchema = {
  type: 'object',
  properties: {
    filter: {
      ...listQuerySchema.properties.filter,
      description:
        'Only the changes and events whose task matches this filter expression (the grammar of `GET /api/v1/tasks?filter=`), ' +
        "judged as each is sent, its dates in your zone then (X-Timezone or the account's); a delete (it carries no task) " +
        'is always sent. Each sent change keeps its own cursor as `id:`, so Last-Event-ID resumes after it. Unreadable text ' +
        'is 400 `validation_failed` (path `/filter`, the 1-based position in the message), before the stream opens.',
    },
  },
} as const;

/** GET /api/v1/tasks/changes query; unknown parameters are ignored. */
export const changesQuerySchema = {
  type: 'object',
  properties: {
    cursor: {
      type: 'string',
      minLength: 1,
      maxLength: 4096,
      description: 'the `nextCursor` of the previous call; none: start a full sync',
    },
    limit: {
      type: 'integer',
      minimum: 1,
      maximum: 500,
      default: 100,
      description:
        '1 to 500 changes per page (default 100). A page is also at most 8 MiB of JSON: it holds fewer changes when they would be more, with hasMore: true',
    },
  },
} as const;

/** GET /api/v1/recurrence/preview query; unknown parameters are ignored. */
export const previewQuerySchema = {
  type: 'object',
  required: ['rule'],
  properties: {
    rule: {
      type: 'string',
      minLength: 1,
      maxLength: 50,
      description: `a recurrence text as a task would carry it (case-insensitive). Understood: ${RECURRENCE_FORMS}`,
    },
    from: {
      type: 'string',
      maxLength: 40,
      format: 'date-time',
      pattern: DATE_TIME_PATTERN,
      description: 'ISO 8601 date-time with `Z` or `+hh:mm` on a real calendar day; default now',
    },
    count: { type: 'integer', minimum: 1, maximum: 20, default: 5, description: '1 to 20 occurrences (default 5)' },
  },
} as const;

const taskProperties = {
  id: { type: 'string', format: 'uuid' },
  title: { type: 'string' },
  notes: { type: ['string', 'null'] },
  priority: { type: ['string', 'null'], enum: ['high', 'medium', 'low', null] },
  dueAt: { ...dateTime, type: ['string', 'null'] },
  completedAt: { ...dateTime, type: ['string', 'null'] },
  tags: { type: 'array', items: { type: 'string' } },
  createdAt: dateTime,
  updatedAt: {
    ...dateTime,
    description: 'changes on every write, strictly increasing; its quoted value is the ETag and the If-Match version',
  },
  parentId: { type: ['string', 'null'], format: 'uuid' },
  goalId: { type: ['string', 'null'], description: 'always null: goals cannot be set through this API' },
  recurrence: { type: ['string', 'null'] },
  location: { type: ['string', 'null'] },
  assigneeId: { type: ['string', 'null'] },
} as const;

/** Every property of `properties` required (a response always carries all its fields). */
const requireAll = <P extends object>(properties: P) => Object.keys(properties) as (keyof P & string)[];

export const taskSchema = {
  type: 'object',
  additionalProperties: false,
  required: requireAll(taskProperties),
  properties: taskProperties,
} as const;

export const taskWithSubtasksSchema = {
  type: 'object',
  additionalProperties: false,
  required: [...requireAll(taskProperties), 'subtasks', 'progress'],
  properties: {
    ...taskProperties,
    subtasks: {
      type: 'array',
      items: { $ref: '#/components/schemas/Task' },
      description: 'live subtasks, oldest first (a subtask has none)',
    },
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
} as const;
