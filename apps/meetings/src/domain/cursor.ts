import { cursorCodec, cursorSigner, type CursorCodec } from '@app/auth/streams';
import { fail } from './errors.js';

/** The lists that page with a cursor; each signs its own, so one list's cursor is not another's. */
const LISTS = ['people', 'series', 'notes', 'notes-changed', 'meetings'] as const;
type CursorList = (typeof LISTS)[number];

/** A keyset cursor's value: the sort key of a page's last row, as short non-empty strings. */
const isSortKey = (values: unknown): values is string[] =>
  Array.isArray(values) && values.every((v) => typeof v === 'string' && v.length > 0 && v.length < 100);

const invalid = () =>
  fail('invalid_cursor', 'cursor is not one this API returned', {
    details: [{ path: 'cursor', message: 'malformed cursor' }],
  });

const codecs = Object.fromEntries(
  LISTS.map((list) => [list, cursorCodec(cursorSigner('meetings', list), { is: isSortKey, invalid })]),
) as Record<CursorList, CursorCodec<string[]>>;

/** Opaque keyset cursors: the sort key of the last row of a page, signed for `list` (the shared codec). */
export function encodeCursor(list: CursorList, values: string[]): string {
  return codecs[list].encode(values);
}

/**
 * Decodes a cursor made by {@link encodeCursor} for `list` with `arity` string values; anything
 * else (edited, truncated, another list's) is a 400 `invalid_cursor`, never a database error.
 */
export function decodeCursor(list: CursorList, cursor: string | undefined, arity: number): string[] | undefined {
  if (cursor === undefined) return undefined;
  const values = codecs[list].decode(cursor);
  if (values.length !== arity) throw invalid();
  return values;
}

/**
 * What a page of a list or feed holds besides its entries (its braces, `nextCursor` or `hasMore`),
 * for MAX_PAGE_BYTES: a cursor is at most 500 characters, as a request takes it back.
 */
export const PAGE_ENVELOPE = 500 + 64;
