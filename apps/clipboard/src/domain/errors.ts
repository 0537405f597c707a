import { errorCatalog } from '@app/http-errors';

/**
 * Every error code the clipboard service answers besides the platform's (http-errors'
 * PLATFORM_ERROR_CODES), with its status: the one place a status is chosen.
 * Clients see only the message (the simple envelope has no code field); the code names the error
 * for the server's own code and tests.
 * test/error-catalog.test.ts checks this list against the OpenAPI document.
 */
const ERROR_CODES = {
  invalid_cursor: 400,
  keyword_taken: 409,
  seal_salt_set: 409,
  sensitive_item: 409,
  snippet_limit: 409,
  cursor_expired: 410,
  cursor_unknown: 410,
  search_too_expensive: 422,
} as const;

/** Every code the service can answer (its own and the platform's), and `fail(code, message)`, which builds its error. */
export const { codes: ALL_ERROR_CODES, fail } = errorCatalog(ERROR_CODES);

/** 404 `not_found` for an item or snippet of the account that does not exist (or an id that is not a UUID). */
export const notFound = (what: 'Clipboard item' | 'Snippet') => fail('not_found', `${what} not found`);
