import {
  WINDOW_ORIGIN,
  cursorSigner,
  decodeWindowCursor,
  earliestPosition,
  encodeWindowCursor,
  windowPagesFrom,
  type StreamPage,
  type WindowPosition,
} from '@app/auth/streams';
import { entriesWithin } from '@app/http-errors';
import type { Kysely } from 'kysely';
import { changedRecords, changesPage, type FeedKind } from '../db/changes.repository.js';
import type { Database } from '../db/schema.js';
import { PAGE_ENVELOPE } from './cursor.js';
import { fail } from './errors.js';
import { inReadingOrder, toMeeting, toNote, toPerson, toSeries, type ItemRow } from './views.js';

type Change =
  | { type: 'upsert'; kind: FeedKind; id: string; item: Record<string, unknown> }
  | { type: 'delete'; kind: FeedKind; id: string; item: null };

export interface ChangesPage {
  changes: Change[];
  nextCursor: string;
  hasMore: boolean;
}

/** Signs the feed's cursors (and stream event ids). */
const FEED = cursorSigner('meetings', 'changes');

function position(cursor: string, accountId: string, nowSeconds: number): WindowPosition {
  const p = decodeWindowCursor(FEED, cursor, accountId, nowSeconds);
  if (p === 'expired')
    throw fail('cursor_expired', 'cursor is older than 30 days; start a full sync again without a cursor');
  if (p === 'foreign')
    throw fail('invalid_cursor', 'cursor belongs to another account', {
      details: [{ path: 'cursor', message: 'was not issued to this account' }],
    });
  if (p === 'invalid')
    throw fail('invalid_cursor', 'cursor is malformed or was altered; start again without it', {
      details: [{ path: 'cursor', message: 'is not a cursor this feed issued' }],
    });
  return p;
}

/**
 * A page of the account's changes feed over notes, people, series and meetings (each meeting
 * with its items, as GET returns it without `previous`), and where the feed stands after each
 * change (a stream's event ids). The tasks feed's rules: without a cursor a full sync of every
 * record, then each change once in its latest state, in commit order, never missing a late
 * commit (the window of @app/auth/streams). A soft-deleted note or meeting is a `delete` (a
 * note's id is its date, as its path names it); archived people and series are upserts.
 * `privateNotes` only for a session that asks with includePrivate=1.
 *
 * The page's keys and its records are read in one repeatable-read transaction, so each record is
 * in the state the page's snapshot saw. A page is at most MAX_PAGE_BYTES of JSON: fewer changes
 * and `hasMore` beyond that.
 */
export async function readChanges(
  db: Kysely<Database>,
  accountId: string,
  query: { cursor?: string | undefined; limit: number },
  withPrivate: boolean,
  nowMillis = Date.now(),
): Promise<ChangesPage & StreamPage> {
  return (await readChangePages(db, accountId, [query.cursor], query.limit, withPrivate, nowMillis))[0]!;
}

/**
 * The page after each of `cursors` (a full sync, undefined, only alone), from one read after the
 * earliest: the account's streams woken by one change read it once (see @app/auth/streams' hub).
 */
export async function readChangePages(
  db: Kysely<Database>,
  accountId: string,
  cursors: ReadonlyArray<string | undefined>,
  limit: number,
  withPrivate: boolean,
  nowMillis = Date.now(),
): Promise<Array<ChangesPage & StreamPage>> {
  const now = Math.floor(nowMillis / 1000);
  const froms = cursors.map((cursor) => (cursor === undefined ? undefined : position(cursor, accountId, now)));
  const from = earliestPosition(froms);
  const { horizon, rows, records } = await db
    .transaction()
    .setIsolationLevel('repeatable read')
    .execute(async (trx) => {
      const read = await changesPage(trx, {
        accountId,
        after: from ? { xid: from.x, id: from.i } : { xid: WINDOW_ORIGIN.x, id: WINDOW_ORIGIN.i },
        keepFrom: from?.lo ?? null,
        limit: limit + 1,
      });
      const ids: Record<FeedKind, string[]> = { note: [], person: [], series: [], meeting: [] };
      for (const r of read.rows.slice(0, limit)) ids[r.kind].push(r.id);
      return { ...read, records: await changedRecords(trx, accountId, ids) };
    });
  const itemsOf = new Map<string, ItemRow[]>();
  for (const item of records.items) {
    const list = itemsOf.get(item.meeting_id);
    if (list) list.push(item);
    else itemsOf.set(item.meeting_id, [item]);
  }
  const notes = new Map(records.notes.map((r) => [r.id, r]));
  const people = new Map(records.people.map((r) => [r.id, r]));
  const series = new Map(records.series.map((r) => [r.id, r]));
  const meetings = new Map(records.meetings.map((r) => [r.id, r]));
  const changes = rows.slice(0, limit).map((r): Change => {
    if (r.kind === 'note') {
      const note = notes.get(r.id)!;
      return r.deleted
        ? { type: 'delete', kind: 'note', id: note.date, item: null }
        : { type: 'upsert', kind: 'note', id: note.date, item: { ...toNote(note) } };
    }
    if (r.kind === 'person') return { type: 'upsert', kind: 'person', id: r.id, item: toPerson(people.get(r.id)!) };
    if (r.kind === 'series') return { type: 'upsert', kind: 'series', id: r.id, item: toSeries(series.get(r.id)!) };
    if (r.deleted) return { type: 'delete', kind: 'meeting', id: r.id, item: null };
    return {
      type: 'upsert',
      kind: 'meeting',
      id: r.id,
      item: { ...toMeeting(meetings.get(r.id)!, withPrivate), items: inReadingOrder(itemsOf.get(r.id) ?? []) },
    };
  });
  // At most MAX_PAGE_BYTES of JSON: a page cut short says hasMore, its cursor after its last change.
  changes.length = entriesWithin(changes, PAGE_ENVELOPE);
  const cursor = (p: WindowPosition) => encodeWindowCursor(FEED, accountId, p);
  return windowPagesFrom(rows, changes, froms, horizon, now, cursor);
}

/** A page of the changes feed (GET /api/changes). */
export async function listChanges(
  db: Kysely<Database>,
  accountId: string,
  query: { cursor?: string; limit: number },
  withPrivate: boolean,
): Promise<ChangesPage> {
  const { changes, nextCursor, hasMore } = await readChanges(db, accountId, query, withPrivate);
  return { changes, nextCursor, hasMore };
}
