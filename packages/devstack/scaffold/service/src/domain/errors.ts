import { errorCatalog } from '@app/http-errors';

/**
 * Every error code the __name__ service answers besides the platform's (http-errors'
 * PLATFORM_ERROR_CODES), with its status: the one place a status is chosen.
 * test/error-catalog.test.ts checks this list against the OpenAPI document.
 */
export const ERROR_CODES = {
  invalid_cursor: 400,
  cursor_expired: 410,
} as const;

/** Every code the service can answer (its own and the platform's), and `fail(code, message)`, which builds its error. */
export const { codes: ALL_ERROR_CODES, fail } = errorCatalog(ERROR_CODES);

/** 404 `not_found` for a __resource__ of the account that does not exist (or a path id that is not a UUID). */
export const notFound = () => fail('not_found', '__Resource__ not found');
