import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import * as repo from '../db/tasks.repository.js';
import {
  WINDOW_ORIGIN,
  earliestPosition,
  windowPagesFrom,
  type StreamPage,
  type WindowPosition,
} from '@app/auth/streams';
import { changesCursor, encodeCursor, queryDigest } from './cursor.js';
import { toTask, type Context, type Task } from './tasks.service.js';
import { entriesWithin } from '@app/http-errors';

type Db = Kysely<Database>;

type Change = { type: 'upsert'; id: string; item: Task } | { type: 'delete'; id: string; item: null };

export interface ChangesPage {
  changes: Change[];
  nextCursor: string;
  hasMore: boolean;
}

/** What a feed page holds besides its changes (`{"changes":[],"nextCursor":"...","hasMore":false}`, the cursor under 4,096 characters). */
const PAGE_ENVELOPE = 4096 + 64;

/**
 * A page of the workspace's changes feed, and where the feed stands after each change (a
 * stream's event ids).
 *
 * Without a cursor it starts a full sync: every live task, then (as for any cursor) each task
 * changed since, once, in its latest state; a soft-deleted task is a `delete`. The page only
 * holds rows stamped below the horizon of its statement (see @app/auth/streams' window), so a
 * change that commits late is delivered later, never skipped. When a page is short, the window is
 * done: the next one starts at this horizon and `hasMore` is false. A page is at most
 * MAX_PAGE_BYTES of JSON: fewer changes and `hasMore` beyond that.
 */
export async function readChanges(
  db: Db,
  ctx: Context,
  query: { cursor?: string | undefined; limit: number },
  nowMillis = Date.now(),
): Promise<ChangesPage & StreamPage> {
  return (await readChangePages(db, ctx, [query.cursor], query.limit, nowMillis))[0]!;
}

/**
 * The page after each of `cursors` (a full sync, undefined, only alone), from one read after the
 * earliest: the workspace's streams woken by one change read it once (see @app/auth/streams' hub).
 */
export async function readChangePages(
  db: Db,
  ctx: Context,
  cursors: ReadonlyArray<string | undefined>,
  limit: number,
  nowMillis = Date.now(),
): Promise<Array<ChangesPage & StreamPage>> {
  const now = Math.floor(nowMillis / 1000);
  const froms = cursors.map((cursor) =>
    cursor === undefined ? undefined : changesCursor(cursor, ctx.workspaceId, now),
  );
  const from = earliestPosition(froms);
  const { horizon, rows } = await repo.changesPage(db, {
    workspaceId: ctx.workspaceId,
    after: from ? { xid: from.x, id: from.i } : { xid: WINDOW_ORIGIN.x, id: WINDOW_ORIGIN.i },
    keepFrom: from?.lo ?? null,
    limit: limit + 1,
  });
  const changes = rows
    .slice(0, limit)
    .map((r): Change =>
      r.deleted ? { type: 'delete', id: r.id, item: null } : { type: 'upsert', id: r.id, item: toTask(r) },
    );
  // At most MAX_PAGE_BYTES of JSON: a page cut short says hasMore, its cursor after its last change.
  changes.length = entriesWithin(changes, PAGE_ENVELOPE);
  const cursor = (p: WindowPosition) => encodeCursor({ k: 'changes', w: queryDigest(ctx.workspaceId), ...p });
  return windowPagesFrom(rows, changes, froms, horizon, now, cursor);
}

/** A page of the changes feed (GET /api/v1/tasks/changes). */
export async function listChanges(
  db: Db,
  ctx: Context,
  query: { cursor?: string; limit: number },
  nowMillis = Date.now(),
): Promise<ChangesPage> {
  const { changes, nextCursor, hasMore } = await readChanges(db, ctx, query, nowMillis);
  return { changes, nextCursor, hasMore };
}
