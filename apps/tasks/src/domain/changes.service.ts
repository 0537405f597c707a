import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import * as repo from '../db/tasks.repository.js';
import { changesCursor, encodeCursor, queryDigest, type ChangesCursor } from './cursor.js';
import { toTask, type Context, type Task } from './tasks.service.js';

type Db = Kysely<Database>;

type Change = { type: 'upsert'; id: string; item: Task } | { type: 'delete'; id: string; item: null };

export interface ChangesPage {
  changes: Change[];
  nextCursor: string;
  hasMore: boolean;
}

/** Before every change: the start of a full sync. */
const ORIGIN = { xid: '0', id: '00000000-0000-0000-0000-000000000000' };

/**
 * A page of the workspace's changes feed.
 *
 * Without a cursor it starts a full sync: every live task, then (as for any cursor) each task
 * changed since, once, in its latest state; a soft-deleted task is a `delete`. The page only
 * holds rows stamped below the horizon of its statement (every transaction below it has ended,
 * every later write is stamped at or above it), so a change that commits late is delivered
 * later, never skipped. When a page is short, the window is done: the next one starts at this
 * horizon and `hasMore` is false.
 */
export async function listChanges(db: Db, ctx: Context, query: { cursor?: string; limit: number }, nowMillis = Date.now()): Promise<ChangesPage> {
  const now = Math.floor(nowMillis / 1000);
  const from = query.cursor === undefined ? undefined : changesCursor(query.cursor, ctx.workspaceId, now);
  const { horizon, rows } = await repo.changesPage(db, {
    workspaceId: ctx.workspaceId,
    after: from ? { xid: from.x, id: from.i } : ORIGIN,
    keepFrom: from?.lo ?? null,
    limit: query.limit + 1,
  });
  const page = rows.slice(0, query.limit);
  const changes = page.map((r): Change => (r.deleted ? { type: 'delete', id: r.id, item: null } : { type: 'upsert', id: r.id, item: toTask(r) }));
  const base = { k: 'changes' as const, w: queryDigest(ctx.workspaceId) };
  const last = page[page.length - 1];
  let next: ChangesCursor;
  if (rows.length > query.limit && last) {
    // Mid-window: the window's start and age stay, the position moves.
    next = { ...base, lo: from?.lo ?? horizon, t: from?.t ?? now, x: last.change_xid, i: last.id };
  } else {
    // The window is done: everything stamped below the horizon is delivered. (The horizon never
    // moves back; the max only guards the cursor against ever doing so.)
    const x = from && BigInt(from.x) > BigInt(horizon) ? from.x : horizon;
    next = { ...base, lo: x, t: now, x, i: ORIGIN.id };
  }
  return { changes, nextCursor: encodeCursor(next), hasMore: rows.length > query.limit };
}
