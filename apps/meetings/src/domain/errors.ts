import { errorCatalog } from '@app/http-errors';

/**
 * Every error code the meetings service answers besides the platform's (http-errors'
 * PLATFORM_ERROR_CODES), with its status: the one place a status is chosen. The per-account limits
 * (domain/limits.ts) name theirs here too.
 * test/error-catalog.test.ts checks this list against the OpenAPI document.
 */
export const ERROR_CODES = {
  invalid_cursor: 400,
  invalid_connection_state: 400,
  cursor_expired: 410,
  private_notes_forbidden: 403,
  parent_not_found: 404,
  person_not_found: 404,
  series_not_found: 404,
  target_not_found: 404,
  already_in_parking_lot: 409,
  invalid_carry_target: 409,
  invalid_status_transition: 409,
  item_limit_reached: 409,
  meeting_exists: 409,
  meeting_limit_reached: 409,
  meeting_not_finished: 409,
  nesting_too_deep: 409,
  not_an_action: 409,
  not_connected: 409,
  tasks_refused: 409,
  not_carryable: 409,
  note_limit_reached: 409,
  person_archived: 409,
  person_limit_reached: 409,
  reorder_conflict: 409,
  revision_conflict: 409,
  series_archived: 409,
  series_limit_reached: 409,
} as const;

/** Every code the service can answer (its own and the platform's), and `fail(code, message)`, which builds its error. */
export const { codes: ALL_ERROR_CODES, fail } = errorCatalog(ERROR_CODES);

/** 404 `not_found` for a record of the account that does not exist (or a path id that is not a UUID). */
export const notFound = (what: 'Person' | 'Series' | 'Meeting' | 'Item') => fail('not_found', `${what} not found`);
