import type { Kysely } from 'kysely';
import { inTransaction } from '@app/auth/runtime';
import {
  WINDOW_ORIGIN,
  cursorCodec,
  cursorSigner,
  decodeWindowCursor,
  earliestPosition,
  encodeWindowCursor,
  windowPagesFrom,
  type StreamPage,
  type WindowPosition,
} from '@app/auth/streams';
import { emitEvent } from '@app/auth/webhooks';
import { isUuid } from '@app/http-errors';
import * as repo from '../db/__name__.repository.js';
import type { Database } from '../db/schema.js';
import type { __Resource__Event } from '../events.js';
import type { Shape } from '@app/http-errors/validation';
import type { __resource__CreateBody, __resource__PatchBody } from './__name__.schemas.js';
import { fail, notFound } from './errors.js';

type Db = Kysely<Database>;

/** A __resource__ as the API shows it (and as its webhook events carry it). */
function to__Resource__(row: repo.__Resource__Row) {
  return { id: row.id, title: row.title, url: row.url, createdAt: row.created_at, updatedAt: row.updated_at };
}
export type __Resource__ = ReturnType<typeof to__Resource__>;

/** Records the write's event in its transaction and returns what the API answers. */
async function emitted(
  trx: Db,
  accountId: string,
  type: __Resource__Event,
  row: repo.__Resource__Row | undefined,
): Promise<__Resource__> {
  if (!row) throw notFound();
  const item = to__Resource__(row);
  await emitEvent(trx, accountId, type, item);
  return item;
}

export function create__Resource__(
  db: Db,
  accountId: string,
  input: Shape<typeof __resource__CreateBody>,
): Promise<__Resource__> {
  return inTransaction(db, async (trx) =>
    emitted(
      trx,
      accountId,
      '__resource__.created',
      await repo.insert__Resource__(trx, accountId, { title: input.title, url: input.url ?? null }),
    ),
  );
}

export function update__Resource__(
  db: Db,
  accountId: string,
  id: string,
  input: Shape<typeof __resource__PatchBody>,
): Promise<__Resource__> {
  return inTransaction(db, async (trx) =>
    emitted(trx, accountId, '__resource__.updated', await repo.update__Resource__(trx, accountId, id, input)),
  );
}

export async function delete__Resource__(db: Db, accountId: string, id: string): Promise<void> {
  await inTransaction(db, async (trx) =>
    emitted(trx, accountId, '__resource__.deleted', await repo.delete__Resource__(trx, accountId, id)),
  );
}

export async function get__Resource__(db: Db, accountId: string, id: string): Promise<__Resource__> {
  const row = await repo.find__Resource__(db, accountId, id);
  if (!row) throw notFound();
  return to__Resource__(row);
}

/**
 * Keyset cursors of the list: the (createdAt, id) of a page's last record, signed by the shared
 * codec, so a cursor edited by hand is a 400 `invalid_cursor`, never a page not handed out.
 */
const LIST = cursorCodec(cursorSigner('__name__', 'list'), {
  is: (v): v is [string, string] =>
    Array.isArray(v) && v.length === 2 && typeof v[0] === 'string' && !Number.isNaN(Date.parse(v[0])) && isUuid(v[1]),
  invalid: () =>
    fail('invalid_cursor', 'cursor is not one this API returned', {
      details: [{ path: 'cursor', message: 'malformed cursor' }],
    }),
});

export async function list__Title__(db: Db, accountId: string, q: { limit: number; cursor?: string }) {
  const rows = await repo.list__Title__(db, accountId, {
    limit: q.limit + 1,
    after: q.cursor === undefined ? undefined : LIST.decode(q.cursor),
  });
  const page = rows.slice(0, q.limit);
  const last = page[page.length - 1];
  return {
    items: page.map(to__Resource__),
    nextCursor: rows.length > q.limit && last ? LIST.encode([last.created_at, last.id]) : null,
  };
}

type Change = { type: 'upsert'; id: string; item: __Resource__ } | { type: 'delete'; id: string; item: null };

export interface ChangesPage {
  changes: Change[];
  nextCursor: string;
  hasMore: boolean;
}

/** Signs the feed's cursors (and stream event ids): a cursor of another feed is not one of this feed. */
const FEED = cursorSigner('__name__', 'changes');

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
 * A page of the account's changes feed, and where the feed stands after each change (a stream's
 * event ids): without a cursor a full sync of every live record, then each change once in its
 * latest state, in commit order, never missing a late commit (the window of @app/auth/streams).
 */
export async function readChanges(
  db: Db,
  accountId: string,
  query: { cursor?: string | undefined; limit: number },
  nowMillis = Date.now(),
): Promise<ChangesPage & StreamPage> {
  return (await readChangePages(db, accountId, [query.cursor], query.limit, nowMillis))[0]!;
}

/**
 * The page after each of `cursors` (a full sync, undefined, only alone), from one read after the
 * earliest: the account's streams woken by one change read it once (see @app/auth/streams' hub).
 */
export async function readChangePages(
  db: Db,
  accountId: string,
  cursors: ReadonlyArray<string | undefined>,
  limit: number,
  nowMillis = Date.now(),
): Promise<Array<ChangesPage & StreamPage>> {
  const now = Math.floor(nowMillis / 1000);
  const froms = cursors.map((cursor) => (cursor === undefined ? undefined : position(cursor, accountId, now)));
  const from = earliestPosition(froms);
  const { horizon, rows } = await repo.changesPage(db, {
    accountId,
    after: from ? { xid: from.x, id: from.i } : { xid: WINDOW_ORIGIN.x, id: WINDOW_ORIGIN.i },
    keepFrom: from?.lo ?? null,
    limit: limit + 1,
  });
  const changes = rows
    .slice(0, limit)
    .map((r): Change =>
      r.deleted ? { type: 'delete', id: r.id, item: null } : { type: 'upsert', id: r.id, item: to__Resource__(r) },
    );
  const cursor = (p: WindowPosition) => encodeWindowCursor(FEED, accountId, p);
  return windowPagesFrom(rows, changes, froms, horizon, now, cursor);
}

/** A page of the changes feed (GET /api/__name__/changes). */
export async function listChanges(
  db: Db,
  accountId: string,
  query: { cursor?: string; limit: number },
): Promise<ChangesPage> {
  const { changes, nextCursor, hasMore } = await readChanges(db, accountId, query);
  return { changes, nextCursor, hasMore };
}
