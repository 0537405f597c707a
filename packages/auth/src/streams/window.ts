import { createHash } from 'node:crypto';
import { PLANNED_ONCE } from '../database/database.js';
import { openCursor, sealCursor, type CursorShape } from './cursor-codec.js';
import type { CursorSigner } from './cursors.js';

/**
 * The feed window of a transaction-stamped changes feed (tasks, meetings), shared so both answer
 * late commits the same way.
 *
 * Every write stamps its rows with its own transaction id (`change_xid xid8`). A reader takes the
 * oldest transaction still running when its statement's snapshot was taken,
 * `pg_snapshot_xmin(pg_current_snapshot())`, the horizon: every row stamped below it is final, and
 * every later write is stamped at or above it (transactions of other databases are left out: see
 * HORIZON below). A page hands out rows below the horizon only, in
 * (change_xid, id) order, so a change that commits late (out of order) is delivered later, never
 * skipped. When a page is short, the window is done and the next one starts at the horizon.
 */

/** Before every change: the start of a full sync. */
export const WINDOW_ORIGIN = { x: '0', i: '00000000-0000-0000-0000-000000000000' } as const;

/**
 * A place in a feed: every change stamped below (x, i) has been delivered. `lo` is where the
 * client's current window began (tombstones stamped below it are never needed) and `t` when that
 * was, in seconds (the cursor's age).
 */
export interface WindowPosition {
  lo: string;
  t: number;
  x: string;
  i: string;
}

/** What a feed row carries for its place in the window. */
export interface StampedRow {
  change_xid: string;
  id: string;
}

/**
 * The statement of one page: `rows` (a select of stamped rows that may use `h.x`, the horizon)
 * laterally joined to the horizon, so the horizon and the rows come from one snapshot. The first
 * result column is `horizon`; a window with no rows still answers one row (its other columns null).
 *
 * Every open stream runs it on each change of its account, so it is cheap by construction: the
 * horizon is a materialized CTE, read once (inlined, the planner copied it into every use of
 * `h.x`, four union parts in meetings: 1.5 ms to plan and 0.6 ms to run), and the statement is
 * {@link PLANNED_ONCE} (its plan, an index range scan of one account's feed, does not depend on
 * the parameters). With 10,000 streams open, that planning was most of Postgres's CPU.
 */
export function horizonStatement(rows: string): string {
  return `${PLANNED_ONCE}with h as materialized (${HORIZON})
     select h.x::text as horizon, c.* from h
     left join lateral (${rows}) c on true`;
}

/**
 * The horizon: the oldest transaction of the snapshot's in-progress list, leaving out those that
 * pg_stat_activity shows running in another database (they cannot write here), else the snapshot's
 * xmax. `pg_snapshot_xmin` alone is cluster-wide: one long write transaction in any other database
 * of the server (another service, a migration, a restore) held every feed and stream back until
 * it ended. A transaction not found there (it ended meanwhile, or its row is hidden) still counts,
 * so the horizon is never later than the plain xmin would allow for this database.
 */
const HORIZON = `select coalesce(
    (select min(x) from pg_snapshot_xip(s.snap) x
      where not exists (select 1 from pg_stat_activity a where a.backend_xid = x::xid and a.datname is distinct from current_database())),
    pg_snapshot_xmax(s.snap)) as x
  from (select pg_current_snapshot() as snap) s`;

/** Where the feed stands after one page of a window, and after each of its rows. */
interface WindowPage {
  next: WindowPosition;
  hasMore: boolean;
  /**
   * Where the feed stands when the window is done (`hasMore` false): every change stamped below it
   * is delivered. The window's horizon, or the cursor's own transaction when the horizon has
   * stepped back behind the cursor.
   */
  reached: bigint;
  /** The position just after the page's row `k`. */
  after(k: number): WindowPosition;
}

/**
 * Cuts a page of `limit` rows from `rows` (read with `limit + 1`, all below `horizon`, after
 * `from`) and places the feed after it: mid-window the window's start and age stay and the
 * position moves; a done window starts the next one at the horizon, or where the cursor stands if
 * that is past the horizon.
 */
function windowPage<R extends StampedRow>(
  rows: R[],
  limit: number,
  from: WindowPosition | undefined,
  horizon: string,
  nowSeconds: number,
): WindowPage {
  const page = rows.slice(0, limit);
  const hasMore = rows.length > limit;
  const lo = from?.lo ?? horizon;
  const t = from?.t ?? nowSeconds;
  const at = (r: R): WindowPosition => ({ lo, t, x: r.change_xid, i: r.id });
  let next: WindowPosition;
  if (hasMore) {
    next = at(page[page.length - 1]!);
  } else if (from && BigInt(from.x) >= BigInt(horizon)) {
    // The horizon can step back behind the cursor: a transaction of another database that ends
    // between the snapshot and the read of pg_stat_activity counts (see HORIZON). The page is
    // then empty and the cursor stays where it is, `i` included: starting again at (x, origin)
    // would hand out again the rows of transaction x up to `i`.
    next = { lo: from.x, t: nowSeconds, x: from.x, i: from.i };
  } else {
    next = { lo: horizon, t: nowSeconds, x: horizon, i: WINDOW_ORIGIN.i };
  }
  return {
    next,
    hasMore,
    reached: BigInt(next.x),
    after: (k) => (k === page.length - 1 ? next : at(page[k]!)),
  };
}

/** Whether the row stands after `p` in the feed's (change_xid, id) order. */
function isAfter(r: StampedRow, p: WindowPosition): boolean {
  const x = BigInt(r.change_xid);
  const px = BigInt(p.x);
  return x > px || (x === px && r.id > p.i);
}

/**
 * Where one read for several positions starts: the earliest of them. A full sync (undefined)
 * starts at the origin and leaves tombstones out, which a position needs: it is read alone.
 */
export function earliestPosition(froms: ReadonlyArray<WindowPosition | undefined>): WindowPosition | undefined {
  if (froms.length === 1) return froms[0];
  let earliest: WindowPosition | undefined;
  for (const from of froms) {
    if (!from) throw new Error('a full sync is read alone');
    if (!earliest || isAfter({ change_xid: earliest.x, id: earliest.i }, from)) earliest = from;
  }
  return earliest;
}

/**
 * The page of each of `froms` from one read after {@link earliestPosition} (several streams of a
 * key woken by the same change): `rows` as read from there, all below `horizon`, and `changes`,
 * the first of them as the feed answers them (cut to the page's size and bytes; one more row when
 * the window goes on). Each position gets the changes after it, as a read of its own at that
 * snapshot would have: every row after a position is at or above its window's start, so none is a
 * tombstone it would leave out. Each is placed as {@link windowPage} places it, its cursors made by
 * `cursor`; a position past every change while the window goes on gets none and stays where it
 * is, to read again.
 */
export function windowPagesFrom<R extends StampedRow, C>(
  rows: R[],
  changes: C[],
  froms: ReadonlyArray<WindowPosition | undefined>,
  horizon: string,
  nowSeconds: number,
  cursor: (p: WindowPosition) => string,
): Array<{ changes: C[]; nextCursor: string; hasMore: boolean; reached: bigint; cursorAfter(k: number): string }> {
  const kept = changes.length;
  return froms.map((from) => {
    let first = 0;
    if (from) while (first < kept && !isAfter(rows[first]!, from)) first += 1;
    if (first === kept && rows.length > kept) {
      const stay = cursor(from!);
      return { changes: [], nextCursor: stay, hasMore: true, reached: BigInt(from!.x), cursorAfter: () => stay };
    }
    const page = windowPage(rows.slice(first, kept + 1), kept - first, from, horizon, nowSeconds);
    return {
      changes: first === 0 ? changes : changes.slice(first),
      nextCursor: cursor(page.next),
      hasMore: page.hasMore,
      reached: page.reached,
      cursorAfter: (k) => cursor(page.after(k)),
    };
  });
}

/** Days a window cursor stays valid (tombstones are kept at least this long). */
const WINDOW_CURSOR_DAYS = 30;

const XID = /^\d{1,20}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const digest = (text: string) => createHash('sha256').update(text).digest('base64url').slice(0, 16);

/** A window cursor's value: the position and `o`, a digest of its owner. */
type WindowCursor = WindowPosition & { o: string };

const WINDOW_CURSOR: CursorShape<WindowCursor> = {
  is(value): value is WindowCursor {
    if (!value || typeof value !== 'object' || Object.keys(value).sort().join(',') !== 'i,lo,o,t,x') return false;
    const { o, lo, t, x, i } = value as Record<string, unknown>;
    return (
      typeof o === 'string' &&
      typeof lo === 'string' &&
      XID.test(lo) &&
      typeof x === 'string' &&
      XID.test(x) &&
      Number.isSafeInteger(t) &&
      typeof i === 'string' &&
      UUID.test(i)
    );
  },
};

/**
 * A position as an opaque cursor of `owner` (the account the feed belongs to), signed by the
 * feed's `signer`: an edited or truncated cursor is a clear 400, never a window the feed did not
 * hand out.
 */
export function encodeWindowCursor(signer: CursorSigner, owner: string, p: WindowPosition): string {
  return sealCursor(signer, WINDOW_CURSOR, { o: digest(owner), lo: p.lo, t: p.t, x: p.x, i: p.i });
}

/**
 * The position of a cursor made by {@link encodeWindowCursor}, or why it cannot be used:
 * `invalid` (not issued by this feed), `foreign` (another owner's), `expired` (older than
 * {@link WINDOW_CURSOR_DAYS}).
 */
export function decodeWindowCursor(
  signer: CursorSigner,
  token: string,
  owner: string,
  nowSeconds: number,
): WindowPosition | 'invalid' | 'foreign' | 'expired' {
  const c = openCursor(signer, WINDOW_CURSOR, token);
  if (c === undefined) return 'invalid';
  if (c.o !== digest(owner)) return 'foreign';
  if (nowSeconds - c.t > WINDOW_CURSOR_DAYS * 86_400) return 'expired';
  return { lo: c.lo, t: c.t, x: c.x, i: c.i };
}
