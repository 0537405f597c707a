import { createHash } from 'node:crypto';
import { cursorCodec, cursorSigner } from '@app/auth/streams';
import { errors, isUuid } from '@app/http-errors';
import { fail } from './errors.js';

export type View = 'all' | 'today' | 'upcoming' | 'completed';

/** Where a list page ended: the manual position (view=all) or createdAt (other views), plus the id. */
export interface ListCursor {
  k: 'list';
  v: View;
  t: string | null;
  /** view=all: the last item's position (exact numeric text). */
  p?: string;
  /** other views: the last item's createdAt. */
  c?: string;
  i: string;
}

/** Where a search page ended: the last item's rank (a float4, exact) and id, for this query. */
export interface SearchCursor {
  k: 'search';
  /** A digest of the query text, so a cursor is only valid for the search that made it. */
  h: string;
  r: number;
  i: string;
}

/** Where a filtered list page ended: view=all's order key of the last item, for this expression. */
export interface FilterCursor {
  k: 'filter';
  /** A digest of the expression, so a cursor is only valid for the filter that made it. */
  h: string;
  /** The last item's position, or its parent's for a subtask (exact numeric text). */
  p: string;
  /** Whether the last item is a subtask. */
  s: boolean;
  c: string;
  i: string;
}

/**
 * A place in a workspace's changes feed: every change stamped below (x, i) has been delivered.
 * `lo` is where the client's current window began (the horizon of the sync that ended the
 * previous one, or of the first request of a full sync) and `t` when that was, in seconds:
 * tombstones stamped below `lo` are never needed, and the cursor expires `t` + 30 days.
 */
export interface ChangesCursor {
  k: 'changes';
  /** A digest of the workspace id: another workspace's cursor is refused. */
  w: string;
  lo: string;
  t: number;
  x: string;
  i: string;
}

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$/;
const DECIMAL = /^-?\d{1,20}(\.\d{1,16383})?$/;
const XID = /^\d{1,20}$/;
const VIEWS: readonly string[] = ['all', 'today', 'upcoming', 'completed'];

/** A digest of search text for {@link SearchCursor.h} (and of a workspace id for {@link ChangesCursor.w}). */
export const queryDigest = (q: string): string => createHash('sha256').update(q).digest('base64url').slice(0, 16);

type Cursor = ListCursor | SearchCursor | FilterCursor | ChangesCursor;

const invalid = () =>
  fail('invalid_cursor', 'cursor is malformed or was altered; start again without it', {
    details: [{ path: 'cursor', message: 'is not a cursor this service issued' }],
  });

function isListCursor(c: Record<string, unknown>): boolean {
  const keys = Object.keys(c).sort().join(',');
  if (typeof c.v !== 'string' || !VIEWS.includes(c.v)) return false;
  if (!(c.t === null || (typeof c.t === 'string' && c.t.length > 0))) return false;
  if (typeof c.i !== 'string' || !isUuid(c.i)) return false;
  if (c.v === 'all') return keys === 'i,k,p,t,v' && typeof c.p === 'string' && DECIMAL.test(c.p);
  return keys === 'c,i,k,t,v' && typeof c.c === 'string' && ISO.test(c.c);
}

function isSearchCursor(c: Record<string, unknown>): boolean {
  return (
    Object.keys(c).sort().join(',') === 'h,i,k,r' &&
    typeof c.h === 'string' &&
    typeof c.r === 'number' &&
    Number.isFinite(c.r) &&
    typeof c.i === 'string' &&
    isUuid(c.i)
  );
}

function isFilterCursor(c: Record<string, unknown>): boolean {
  return (
    Object.keys(c).sort().join(',') === 'c,h,i,k,p,s' &&
    typeof c.h === 'string' &&
    typeof c.p === 'string' &&
    DECIMAL.test(c.p) &&
    typeof c.s === 'boolean' &&
    typeof c.c === 'string' &&
    ISO.test(c.c) &&
    typeof c.i === 'string' &&
    isUuid(c.i)
  );
}

function isChangesCursor(c: Record<string, unknown>): boolean {
  return (
    Object.keys(c).sort().join(',') === 'i,k,lo,t,w,x' &&
    typeof c.w === 'string' &&
    typeof c.lo === 'string' &&
    XID.test(c.lo) &&
    typeof c.x === 'string' &&
    XID.test(c.x) &&
    Number.isSafeInteger(c.t) &&
    typeof c.i === 'string' &&
    isUuid(c.i)
  );
}

function isCursor(value: unknown): value is Cursor {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return false;
  const c = value as Record<string, unknown>;
  return (
    (c.k === 'list' && isListCursor(c)) ||
    (c.k === 'search' && isSearchCursor(c)) ||
    (c.k === 'filter' && isFilterCursor(c)) ||
    (c.k === 'changes' && isChangesCursor(c))
  );
}

// The shared codec, signed (every query is filtered by workspace too): an edited or truncated
// cursor is a clear 400 `invalid_cursor`, never a page the service did not hand out. One codec for
// the three kinds: each names its kind, so a list cursor given to the feed is told apart (400
// validation_failed, below), not refused as forged. The rules of each kind are tasks' own.
const codec = cursorCodec(cursorSigner('tasks', 'cursor'), { is: isCursor, invalid });

/** Encodes a cursor as an opaque token. */
export const encodeCursor = (cursor: Cursor): string => codec.encode(cursor);

/** Decodes and strictly checks a token: 400 `invalid_cursor` for anything this service did not issue. */
const decodeCursor = (token: string): Cursor => codec.decode(token);

const kindMismatch = (given: Cursor['k'], expected: Cursor['k']) =>
  errors.validation(
    [{ path: 'cursor', message: `is a ${given} cursor; this request needs a ${expected} cursor` }],
    'cursor belongs to a different kind of request',
  );

/** The list cursor for this view and tag; a search cursor is 400 `validation_failed`, another view's or tag's 400 `invalid_cursor`. */
export function listCursor(token: string, view: View, tag: string | null): ListCursor {
  const c = decodeCursor(token);
  if (c.k !== 'list') throw kindMismatch(c.k, 'list');
  if (c.v !== view || c.t !== tag) {
    throw fail('invalid_cursor', 'cursor belongs to a different view or tag', {
      details: [{ path: 'cursor', message: `was issued for view=${c.v}${c.t === null ? '' : ` and a tag`}` }],
    });
  }
  return c;
}

/** The search cursor for this query; a list cursor is 400 `validation_failed`, another query's 400 `invalid_cursor`. */
export function searchCursor(token: string, q: string): SearchCursor {
  const c = decodeCursor(token);
  if (c.k !== 'search') throw kindMismatch(c.k, 'search');
  if (c.h !== queryDigest(q))
    throw fail('invalid_cursor', 'cursor belongs to a different search', {
      details: [{ path: 'cursor', message: 'was issued for another q' }],
    });
  return c;
}

/** The filter cursor for this expression; another kind is 400 `validation_failed`, another expression's 400 `invalid_cursor`. */
export function filterCursor(token: string, filter: string): FilterCursor {
  const c = decodeCursor(token);
  if (c.k !== 'filter') throw kindMismatch(c.k, 'filter');
  if (c.h !== queryDigest(filter))
    throw fail('invalid_cursor', 'cursor belongs to a different filter', {
      details: [{ path: 'cursor', message: 'was issued for another filter' }],
    });
  return c;
}

/** How long a changes cursor stays valid; tombstones are kept a day longer (see pruning). */
export const CHANGES_CURSOR_DAYS = 30;

/**
 * The changes cursor of this workspace: a list or search cursor is 400 `validation_failed`,
 * another workspace's 400 `invalid_cursor`, one older than {@link CHANGES_CURSOR_DAYS} 410
 * `cursor_expired`.
 */
export function changesCursor(token: string, workspaceId: string, nowSeconds: number): ChangesCursor {
  const c = decodeCursor(token);
  if (c.k !== 'changes') throw kindMismatch(c.k, 'changes');
  if (c.w !== queryDigest(workspaceId)) {
    throw fail('invalid_cursor', 'cursor belongs to another workspace', {
      details: [{ path: 'cursor', message: 'was not issued to this account' }],
    });
  }
  if (nowSeconds - c.t > CHANGES_CURSOR_DAYS * 86_400) {
    throw fail(
      'cursor_expired',
      `cursor is older than ${CHANGES_CURSOR_DAYS} days; start a full sync again without a cursor`,
    );
  }
  return c;
}
