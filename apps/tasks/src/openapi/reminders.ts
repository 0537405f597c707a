import { idPathParameter } from '@app/http-errors/validation';
import { LIMITS } from '../domain/limits.js';
import { createReminderSchema, reminderListSchema } from '../domain/reminder.schemas.js';
import {
  badBody,
  badTimezone,
  common,
  err,
  forbidden,
  idParam,
  json,
  notFound,
  ok,
  readScope,
  ref,
  timezoneParam,
  tooLarge,
  writeScope,
} from './shared.js';

// A task's reminders: add, list, remove. Firing sends `reminder.fired` (see the webhooks).

const reminderIdParam = idPathParameter('reminder id (UUID; anything else is 404)', 'reminderId');

export const remindersPaths = {
  '/api/v1/tasks/{id}/reminders': {
    get: {
      operationId: 'listReminders',
      tags: ['Tasks'],
      summary: "List a task's reminders",
      security: readScope,
      parameters: [idParam, timezoneParam],
      responses: {
        '200': ok('the reminders, oldest first, fired ones included', reminderListSchema),
        '400': err(badTimezone),
        ...common,
        '403': forbidden,
        '404': notFound,
      },
    },
    post: {
      operationId: 'createReminder',
      tags: ['Tasks'],
      summary: 'Add a reminder to a task',
      description:
        'At `firesAt` (within 2 s) the service sends `reminder.fired` `{ reminder, task }` to webhook subscriptions of that event, once, ' +
        'unless the task is completed or deleted by then. A reminder of a completed or deleted task does not fire.',
      security: writeScope,
      parameters: [idParam, timezoneParam],
      requestBody: { required: true, content: json(createReminderSchema) },
      responses: {
        '201': ok('the new reminder', ref('Reminder')),
        '400': err(`${badBody.description} (\`/before\` outside PT1M to P30D); ${badTimezone}`),
        ...common,
        '403': forbidden,
        '404': notFound,
        '409': err(
          `\`no_due_time\`: \`before\` on a task without \`dueAt\`; \`reminder_limit_reached\`: the task has ${LIMITS.remindersPerTask} reminders already`,
        ),
        '413': tooLarge,
      },
    },
  },
  '/api/v1/tasks/{id}/reminders/{reminderId}': {
    delete: {
      operationId: 'deleteReminder',
      tags: ['Tasks'],
      summary: 'Remove a reminder',
      security: writeScope,
      parameters: [idParam, reminderIdParam, timezoneParam],
      responses: {
        '204': { description: 'removed (it will not fire)' },
        '400': err(badTimezone),
        ...common,
        '403': forbidden,
        '404': err('`not_found`: no such live task in your workspace, or no such reminder of it'),
      },
    },
  },
} as const;
