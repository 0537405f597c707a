import { errorCatalog } from '@app/http-errors';

/**
 * Every error code the tasks service answers besides the platform's (http-errors'
 * PLATFORM_ERROR_CODES), with its status: the one place a status is chosen.
 * test/error-catalog.test.ts checks this list against the OpenAPI document.
 */
export const ERROR_CODES = {
  invalid_cursor: 400,
  batch_failed: 409,
  idempotency_key_conflict: 409,
  idempotency_request_in_progress: 409,
  no_due_time: 409,
  not_top_level: 409,
  reminder_limit_reached: 409,
  subtask_limit_reached: 409,
  task_already_completed: 409,
  task_deleted: 409,
  task_not_completed: 409,
  cursor_expired: 410,
  after_self: 422,
  due_date_in_past: 422,
  invalid_priority: 422,
  parent_is_self: 422,
  parent_is_subtask: 422,
  task_has_subtasks: 422,
} as const;

/** Every code the service can answer (its own and the platform's), and `fail(code, message)`, which builds its error. */
export const { codes: ALL_ERROR_CODES, fail } = errorCatalog(ERROR_CODES);

/** 404 `not_found`: no such live task in the caller's workspace (or a path id that is not a UUID). */
export const taskNotFound = (message = 'Task not found') => fail('not_found', message);
