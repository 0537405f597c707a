import { webhookOpenApi } from '@app/auth/webhooks';
import { TASK_EVENTS } from '../events.js';
import { taskWebhookFilter } from '../domain/webhook-filter.js';

// The tasks webhooks: subscriptions, deliveries and the task events they carry. The operations,
// schemas and tag are @app/auth's (packages/auth/src/webhooks/openapi.ts), for this service's path
// and catalog, with the `filter` its subscriptions take; the events' data and examples are here.

const task = { $ref: '#/components/schemas/Task' };
/** The queue job that fired the event (packages/auth/src/webhooks/worker.ts). */
const byJob = (id: string) => ({ type: 'system', id });

/** The example task the events show, as the API returns it. */
const plumber = {
  id: '2b6c07ab-d2f0-4e0d-8cc2-f2be2fd9012d',
  title: 'Call the plumber',
  notes: 'About the kitchen sink',
  priority: 'high',
  dueAt: '2030-01-07T09:00:00Z',
  completedAt: null,
  tags: ['home'],
  createdAt: '2030-01-06T17:30:12.684422Z',
  updatedAt: '2030-01-06T17:30:12.684422Z',
  parentId: null,
  goalId: null,
  recurrence: null,
  location: null,
  assigneeId: null,
};
const renamed = { ...plumber, title: 'Call the plumber back', updatedAt: '2030-01-07T08:15:04.204113Z' };
const completed = { ...renamed, completedAt: '2030-01-07T08:15:04.204113Z' };

export const webhooks = webhookOpenApi(
  '/api/v1/webhooks',
  TASK_EVENTS,
  {
    'task.created': { summary: 'A task was created', data: task, example: { data: plumber } },
    'task.updated': {
      summary: 'A task was changed (PATCH, auto-tag)',
      data: task,
      previous: true,
      example: { data: renamed, previous: { title: plumber.title } },
    },
    'task.completed': {
      summary: 'A task was completed (alone: no task.updated beside it)',
      data: task,
      previous: true,
      example: { data: completed, previous: { completedAt: null } },
    },
    'task.reopened': {
      summary: 'A completed task was opened again',
      data: task,
      previous: true,
      example: {
        data: { ...renamed, updatedAt: '2030-01-07T08:20:41.083937Z' },
        previous: { completedAt: completed.completedAt },
      },
    },
    'task.deleted': {
      summary: 'A task was deleted (its subtasks too, each with its own event)',
      data: task,
      example: { data: { ...renamed, updatedAt: '2030-01-07T08:25:00.172294Z' } },
    },
    'task.moved': {
      summary: 'A top-level task moved in the manual order (no field of it changed: no previous)',
      data: task,
      example: { data: { ...renamed, updatedAt: '2030-01-07T08:16:10.905344Z' } },
    },
    'reminder.fired': {
      summary: "A reminder's time came (the task open): the reminder and its task",
      data: {
        type: 'object',
        additionalProperties: false,
        required: ['reminder', 'task'],
        properties: { reminder: { $ref: '#/components/schemas/Reminder' }, task },
      },
      example: {
        actor: byJob('reminder'),
        data: {
          reminder: {
            id: '7d3892e8-abc1-4821-8274-3eb5a2ca7bbc',
            taskId: plumber.id,
            at: null,
            before: 'PT15M',
            firesAt: '2030-01-07T08:45:00Z',
            firedAt: '2030-01-07T08:45:00.760714Z',
          },
          task: renamed,
        },
      },
    },
    'task.due': {
      summary: "An open task's due time came (once per task and due time)",
      data: task,
      example: { actor: byJob('task_due'), data: renamed },
    },
  },
  '',
  taskWebhookFilter.field,
);
