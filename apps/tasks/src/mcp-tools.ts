import type { ToolTableEntry } from '@app/auth/mcp';

/**
 * The tasks service's task-level MCP tools (the `default` toolset): which operations of the
 * OpenAPI document each runs. Arguments, scopes and hints come from the document.
 */
export const mcpTools: ToolTableEntry[] = [
  {
    name: 'find_tasks',
    title: 'Find tasks',
    description:
      'Read tasks: one task by id (with its subtasks), a view (today: due by the end of today, overdue included; upcoming; all; completed), tasks with a tag or containing a text (q), tasks matching a filter (`(today | overdue) & #work & !priority: low`; its argument lists the terms), or every change since a sync cursor.',
    actions: { get: 'getTask', list: 'listTasks', changes: 'listTaskChanges' },
    compact: ['title', 'dueAt', 'priority', 'tags', 'completedAt', 'parentId', 'recurrence'],
  },
  {
    name: 'add_tasks',
    title: 'Add tasks',
    description:
      'Create one or more tasks (or subtasks with parentId) in one call: give each its title and, as needed, dueAt, priority, tags, notes and recurrence.',
    batch: 'tasks',
    sendAs: { operation: 'runTaskBatch', commands: { add: 'add' } },
    actions: { add: 'createTask' },
    compact: ['title', 'dueAt', 'priority', 'tags', 'parentId', 'recurrence'],
  },
  {
    name: 'update_tasks',
    title: 'Update tasks',
    description:
      'Change one or more tasks in one call, each by its id and action: edit its fields, complete or reopen it (a recurring task moves to its next due time), move it in the manual order, suggest tags, or delete it.',
    batch: 'tasks',
    sendAs: {
      operation: 'runTaskBatch',
      commands: { edit: 'update', complete: 'complete', reopen: 'reopen', move: 'move', delete: 'delete' },
    },
    actions: {
      edit: 'updateTask',
      complete: 'completeTask',
      reopen: 'reopenTask',
      move: 'moveTask',
      auto_tag: 'autoTagTask',
      delete: 'deleteTask',
    },
    compact: ['title', 'dueAt', 'priority', 'tags', 'completedAt', 'recurrence'],
  },
  {
    name: 'preview_recurrence',
    title: 'Preview a recurrence',
    description:
      'The next dates a recurrence phrase ("every 2nd tuesday", "every! 3 days") gives, to check one before setting it.',
    actions: { preview: 'previewRecurrence' },
  },
];
