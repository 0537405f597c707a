import { PLATFORM_ERROR_CODES, catalogError } from '@app/http-errors';

/**
 * Every error code the clipboard service answers besides the platform's ({@link PLATFORM_ERROR_CODES}),
 * with its status: the one place a status is chosen. Clients see only the message (the simple envelope has no code field); the code still names the error in logs and tests.
 * test/error-catalog.test.ts checks this list against the OpenAPI document.
 */
export const ERROR_CODES = {
  invalid_cursor: 400,
  keyword_taken: 409,
  snippet_limit: 409,
  cursor_expired: 410,
  cursor_unknown: 410,
} as const;

/** Every code the service can answer: its own and the platform's. */
export const ALL_ERROR_CODES = { ...PLATFORM_ERROR_CODES, ...ERROR_CODES } as const;

/** The error of a catalogued code: `throw fail('task_deleted', 'The task is deleted')`. */
export const fail = catalogError(ALL_ERROR_CODES);

/** 404 `not_found` for an item or snippet of the account that does not exist (or an id that is not a UUID). */
export const notFound = (what: 'Clipboard item' | 'Snippet') => fail('not_found', `${what} not found`);
