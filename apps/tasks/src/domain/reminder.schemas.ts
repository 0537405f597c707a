import { DATE_TIME_PATTERN } from '@app/http-errors/validation';
import { dateTime } from './task.schemas.js';
import { LIMITS } from './limits.js';

/*
 * A reminder's request and response schemas: the routes compile the request one with ajv, the
 * document (openapi/reminders.ts) shows both, the domain derives its types from them.
 */

/** An ISO 8601 duration of weeks, or of days, hours, minutes and seconds (years and months have no fixed length). */
export const DURATION_PATTERN = '^P(?:\\d{1,7}W|(?:\\d{1,7}D)?(?:T(?:\\d{1,7}H)?(?:\\d{1,7}M)?(?:\\d{1,7}S)?)?)$';

/** POST /api/v1/tasks/{id}/reminders body: exactly one of `at` and `before`. */
export const createReminderSchema = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  maxProperties: 1,
  properties: {
    at: {
      type: 'string',
      maxLength: 64,
      format: 'date-time',
      pattern: DATE_TIME_PATTERN,
      description:
        'The instant it fires: ISO 8601 date-time with `Z` or an offset (stored and returned in UTC). One already past fires at once.',
    },
    before: {
      type: 'string',
      maxLength: 40,
      pattern: DURATION_PATTERN,
      description:
        "How long before the task's `dueAt` it fires: an ISO 8601 duration from PT1M to P30D in weeks (`P1W`) or days, hours, minutes and seconds (`P1DT12H`, `PT15M`); " +
        'years and months are refused (400). It follows `dueAt` when the due time is edited, and is copied to the next occurrence of a recurring task. ' +
        'A task without `dueAt` is 409 `no_due_time`.',
    },
  },
  description: `Exactly one of \`at\` and \`before\` (anything else: 400). At most ${LIMITS.remindersPerTask} reminders a task (409 \`reminder_limit_reached\`).`,
} as const;

const nullableDateTime = { ...dateTime, type: ['string', 'null'] } as const;

export const reminderSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'taskId', 'at', 'before', 'firesAt', 'firedAt'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    taskId: { type: 'string', format: 'uuid' },
    at: { ...nullableDateTime, description: 'the instant asked for (null for a relative reminder)' },
    before: {
      type: ['string', 'null'],
      description: 'the duration before `dueAt` asked for, as sent (null for an absolute reminder)',
    },
    firesAt: {
      ...nullableDateTime,
      description:
        "when it fires: `at`, or the task's `dueAt` minus `before` (null while the task has no due time: it does not fire then)",
    },
    firedAt: { ...nullableDateTime, description: 'when `reminder.fired` was sent (null until then)' },
  },
} as const;

/** GET /api/v1/tasks/{id}/reminders answer. */
export const reminderListSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['items'],
  properties: {
    items: {
      type: 'array',
      maxItems: LIMITS.remindersPerTask,
      items: { $ref: '#/components/schemas/Reminder' },
      description: "the task's reminders, oldest first",
    },
  },
} as const;
