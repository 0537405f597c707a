import {
  badBody,
  badTimezone,
  common,
  err,
  etag,
  forbidden,
  idParam,
  ifMatchParam,
  json,
  notFound,
  ok,
  readScope,
  ref,
  stale,
  timezoneParam,
  tooLarge,
  writeScope,
} from './shared.js';
import { emptyBodySchema, listQuerySchema } from '../domain/task.schemas.js';

// The task operations: list, create, get, edit, delete, complete, reopen, auto-tag and move.

function taskOp(
  operationId: string,
  summary: string,
  description: string,
  opts: { write: boolean; body?: object; ifMatch?: boolean; extra?: Record<string, object>; item?: object },
) {
  const responses: Record<string, object> = {
    '200': ok(
      'the task',
      opts.item ?? {
        type: 'object',
        additionalProperties: false,
        required: ['item'],
        properties: { item: ref('Task') },
      },
      etag,
    ),
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
    // complete, reopen and auto-tag take no body or `{}`; edit and move refuse a missing one (400).
    ...(opts.body ? { requestBody: { required: opts.body !== emptyBodySchema, content: json(opts.body) } } : {}),
    responses,
  };
}

const itemResponse = {
  type: 'object',
  additionalProperties: false,
  required: ['item'],
  properties: { item: ref('Task') },
};

export const tasksPaths = {
  '/api/v1/tasks': {
    get: {
      operationId: 'listTasks',
      tags: ['Tasks'],
      summary: 'List tasks by view or tag, search them, or filter them',
      security: readScope,
      parameters: [
        ...Object.entries(listQuerySchema.properties).map(([name, schema]) => ({
          name,
          in: 'query',
          required: false,
          schema,
          description: schema.description,
        })),
        timezoneParam,
      ],
      responses: {
        '200': ok(
          'a page of tasks: TaskWithSubtasks items for view=all, Tasks otherwise (also with filter); nextCursor null on the last page',
          {
            type: 'object',
            additionalProperties: false,
            required: ['items', 'nextCursor'],
            properties: {
              items: { type: 'array', items: { anyOf: [ref('Task'), ref('TaskWithSubtasks')] } },
              nextCursor: { type: ['string', 'null'] },
            },
          },
        ),
        '400': err(
          `\`validation_failed\` (a query parameter; a filter that is unreadable, path /filter with the position, or combined with view, tag or q; a cursor of another kind of list), \`invalid_cursor\` (also one of another filter), ${badTimezone}`,
        ),
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
        {
          name: 'Idempotency-Key',
          in: 'header',
          required: false,
          schema: { type: 'string', minLength: 1, maxLength: 200 },
          description: 'see the idempotency rules in the API description',
        },
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
      item: {
        type: 'object',
        additionalProperties: false,
        required: ['item'],
        properties: { item: ref('TaskWithSubtasks') },
      },
    }),
    patch: taskOp('updateTask', 'Edit a task', 'Partial edit; only the fields sent change.', {
      write: true,
      body: ref('TaskPatch'),
      ifMatch: true,
      extra: {
        '404': err('`not_found`: the task, or the parentId sent, names no live task of your workspace'),
        '409': err('`subtask_limit_reached`'),
        '422': err(
          '`due_date_in_past`, `invalid_priority`, `parent_is_subtask`, `parent_is_self`, `task_has_subtasks`',
        ),
      },
    }),
    delete: taskOp('deleteTask', 'Soft-delete a task (and its subtasks)', 'Returns the deleted task.', {
      write: true,
      ifMatch: true,
    }),
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
        properties: {
          item: ref('Task'),
          next: {
            anyOf: [ref('Task'), { type: 'null' }],
            description: 'the next occurrence of a recurring task, else null',
          },
        },
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
    post: taskOp(
      'autoTagTask',
      'Automatic tagging (compatibility no-op)',
      'Reads no task text, contacts nothing, changes nothing.',
      {
        write: true,
        body: emptyBodySchema,
        item: {
          type: 'object',
          additionalProperties: false,
          required: ['item', 'tagged'],
          properties: { item: ref('Task'), tagged: { const: false } },
        },
      },
    ),
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
};
