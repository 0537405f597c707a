/**
 * The webhook events of the tasks service, each with the scope that reads its resource: the
 * declaration's `events` (service.ts), the OpenAPI document's and the domain's. Data only, so
 * loading the declaration loads nothing else.
 */
export const TASK_EVENTS = {
  'task.created': 'tasks:read',
  'task.updated': 'tasks:read',
  'task.completed': 'tasks:read',
  'task.reopened': 'tasks:read',
  'task.deleted': 'tasks:read',
  'task.moved': 'tasks:read',
  'reminder.fired': 'tasks:read',
  'task.due': 'tasks:read',
} as const;

export type TaskEvent = keyof typeof TASK_EVENTS;
