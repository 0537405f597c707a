import { unsafeInputProblem } from '@app/http-errors/validation';
import { fail } from './errors.js';

/** Opaque keyset cursors: the sort key of the last row of a page, base64url JSON. */
export function encodeCursor(values: (string | number)[]): string {
  return Buffer.from(JSON.stringify(values)).toString('base64url');
}

/**
 * Decodes a cursor made by {@link encodeCursor} with `arity` string values; anything else is a
 * 400 `invalid_cursor` (never a database error).
 */
export function decodeCursor(cursor: string | undefined, arity: number): string[] | undefined {
  if (cursor === undefined) return undefined;
  let values: unknown;
  try {
    values = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    values = undefined;
  }
  // A NUL could come out of the base64: refused by the one input check, as everywhere else.
  if (!Array.isArray(values) || values.length !== arity || unsafeInputProblem(values) !== null || !values.every((v) => typeof v === 'string' && v.length > 0 && v.length < 100)) {
    throw fail('invalid_cursor', 'cursor is not one this API returned', { details: [{ path: 'cursor', message: 'malformed cursor' }] });
  }
  return values as string[];
}
