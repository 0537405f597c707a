import { batchAnswerSchema, batchSchema } from '../domain/batch.schemas.js';
import {
  badBody,
  badTimezone,
  common,
  err,
  errorSchema,
  forbidden,
  json,
  ok,
  timezoneParam,
  tooLarge,
  writeScope,
} from './shared.js';

// POST /api/v1/tasks/batch: an offline client's commands in one request.

/** The rich error envelope (`Error`), as the document's components hold it. */
type Envelope = {
  properties: { error: { required: readonly string[]; properties: Record<string, unknown> } };
};
const envelope = errorSchema as Envelope;

/** 409 `batch_failed`: the error envelope, its `details` the failed command's index and error. */
const batchFailedSchema = {
  ...errorSchema,
  properties: {
    error: {
      ...envelope.properties.error,
      required: [...envelope.properties.error.required, 'details'],
      properties: {
        ...envelope.properties.error.properties,
        code: { const: 'batch_failed' },
        details: {
          type: 'object',
          additionalProperties: false,
          required: ['index', 'error'],
          properties: {
            index: { type: 'integer', minimum: 0, description: 'the first command that failed' },
            error: { type: 'object', description: "its single call's error object" },
          },
        },
      },
    },
  },
};

export const batchPaths = {
  '/api/v1/tasks/batch': {
    post: {
      operationId: 'runTaskBatch',
      tags: ['Tasks'],
      summary: 'Run a batch of task commands (offline sync)',
      description: [
        "Commands run in order, each as its single call would (`add`: POST /api/v1/tasks, `update`: PATCH, `complete`, `reopen`, `delete`, `move`: PUT .../position), with that call's checks, answer and event (feed, stream, webhooks); a batch counts as one request per command against the rate limit.",
        "`taskId`, `args.parentId` (add, update) and `args.afterId` (move) may name the `tempId` of an earlier `add` of the batch. A value that is neither a task id (UUID) nor the tempId of an earlier add that succeeded (a tempId defined later, or whose add failed) is that command's 404 `not_found`.",
        "A command id applied for this account within 24 hours is not applied again: it answers its first result (and, for an add, its tempId maps to the task it made). Only applied commands are kept: a failed command's id can be sent again. The same batch sent twice at once applies each command once.",
        'Without `atomic`, a failed command is its result (`status` and `error`) and the rest still run; with `atomic: true` the first failure undoes the whole batch: 409 `batch_failed`, nothing changed.',
        'A batch that repeats a command id or a tempId, gives a tempId to anything but an add, a taskId to an add, or no taskId to another command is 400 `validation_failed` as a whole.',
      ].join('\n\n'),
      security: writeScope,
      parameters: [timezoneParam],
      requestBody: { required: true, content: json(batchSchema) },
      responses: {
        '200': ok("each command's result, the tempIds' ids and a changes-feed cursor", batchAnswerSchema),
        '400': err(`${badBody.description} (no commands, more than 100, a repeated id or tempId); ${badTimezone}`),
        ...common,
        '403': forbidden,
        '409': {
          description:
            '`batch_failed`: an atomic batch whose command `details.index` failed with `details.error`; nothing changed',
          content: json(batchFailedSchema),
        },
        '413': tooLarge,
      },
    },
  },
};
