import { cursorSigner, type CursorSigner } from '@app/auth/streams';
import { unsafeInputProblem } from '@app/http-errors/validation';
import { fail } from './errors.js';

/** The lists that page with a cursor; each signs its own, so one list's cursor is not another's. */
const LISTS = ['people', 'series', 'notes', 'notes-changed', 'meetings'] as const;
type CursorList = (typeof LISTS)[number];
const signers = Object.fromEntries(LISTS.map((list) => [list, cursorSigner('meetings', list)])) as Record<CursorList, CursorSigner>;
const signer = (list: CursorList): CursorSigner => signers[list];

/** Opaque keyset cursors: the sort key of the last row of a page, base64url JSON, signed for `list`. */
export function encodeCursor(list: CursorList, values: (string | number)[]): string {
  return signer(list).sign(Buffer.from(JSON.stringify(values)).toString('base64url'));
}

/**
 * Decodes a cursor made by {@link encodeCursor} for `list` with `arity` string values; anything
 * else (edited, truncated, another list's) is a 400 `invalid_cursor`, never a database error.
 */
export function decodeCursor(list: CursorList, cursor: string | undefined, arity: number): string[] | undefined {
  if (cursor === undefined) return undefined;
  const payload = signer(list).open(cursor);
  let values: unknown;
  try {
    values = payload === undefined ? undefined : JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    values = undefined;
  }
  // A NUL could come out of the base64: refused by the one input check, as everywhere else.
  if (!Array.isArray(values) || values.length !== arity || unsafeInputProblem(values) !== null || !values.every((v) => typeof v === 'string' && v.length > 0 && v.length < 100)) {
    throw fail('invalid_cursor', 'cursor is not one this API returned', { details: [{ path: 'cursor', message: 'malformed cursor' }] });
  }
  return values as string[];
}

/**
 * What a page of a list or feed holds besides its entries (its braces, `nextCursor` or `hasMore`),
 * for MAX_PAGE_BYTES: a cursor is at most 500 characters, as a request takes it back.
 */
export const PAGE_ENVELOPE = 500 + 64;
