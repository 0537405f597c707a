import { LIMITS } from './limits.js';

/*
 * POST /api/v1/tasks/batch: the request and result schemas, in the domain (its types are derived
 * from them; the document imports them). A command's `args` are checked, command by command, by
 * the schema of the single call it stands for (the create, PATCH or position body).
 */

/** The commands a batch may carry, each standing for one single call. */
const BATCH_COMMAND_TYPES = ['add', 'update', 'complete', 'reopen', 'delete', 'move'] as const;

/** POST /api/v1/tasks/batch body. */
export const batchSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['commands'],
  properties: {
    commands: {
      type: 'array',
      minItems: 1,
      maxItems: LIMITS.batchCommands,
      description: `1 to ${LIMITS.batchCommands} commands, run in order`,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['id', 'type'],
        properties: {
          id: {
            type: 'string',
            format: 'uuid',
            maxLength: 36,
            description:
              'a UUID the client makes per command: a command id already applied for this account within 24 hours is not applied again and answers its first result',
          },
          type: { type: 'string', enum: BATCH_COMMAND_TYPES },
          tempId: {
            type: 'string',
            minLength: 1,
            maxLength: 64,
            description:
              '`add` only: names the new task, so that a later command of the batch can use it as `taskId`, `args.parentId` or `args.afterId`',
          },
          taskId: {
            type: 'string',
            minLength: 1,
            maxLength: 64,
            description: 'every type but `add`: the task, by id or by the `tempId` of an earlier `add` of the batch',
          },
          args: {
            type: 'object',
            // Any object here (so typed clients take any args): the single call's schema checks them.
            additionalProperties: true,
            description:
              '`add`: the create body; `update`: the PATCH body with an optional `ifMatch`; `move`: the position body (`afterId`); `complete`, `reopen`, `delete`: none, or `{ "ifMatch": ... }`. `ifMatch` is what the If-Match header takes: the quoted updatedAt (the ETag), `*`, or a list of them.',
          },
        },
      },
    },
    atomic: {
      type: 'boolean',
      default: false,
      description: 'true: the first failed command undoes the whole batch (409 `batch_failed`)',
    },
  },
} as const;

/** One command's result: what its single call would have answered. */
const batchResultSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'status'],
  properties: {
    id: { type: 'string', format: 'uuid', description: "the command's id" },
    status: {
      type: 'integer',
      description: 'the HTTP status the single call would have had (201 for `add`, else 200)',
    },
    item: { $ref: '#/components/schemas/Task', description: 'the task the single call would have answered' },
    error: {
      type: 'object',
      description: "the single call's error object (`code`, `message`, `requestId`, `details?`)",
    },
  },
} as const;

/** 200 answer of POST /api/v1/tasks/batch. */
export const batchAnswerSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['results', 'tempIds', 'cursor'],
  properties: {
    results: { type: 'array', items: batchResultSchema, description: 'one per command, in order' },
    tempIds: {
      type: 'object',
      additionalProperties: { type: 'string', format: 'uuid' },
      description: 'each `tempId` of an `add` that created its task (or answered a first result), with the id',
    },
    cursor: {
      type: 'string',
      description:
        "a changes-feed cursor just after the batch's last change (where the feed stands now when the batch changed nothing)",
    },
  },
} as const;
