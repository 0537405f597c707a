import { errors, pageWithin } from '@app/http-errors';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { filteredPage } from '../db/filter.repository.js';
import { encodeCursor, filterCursor, queryDigest } from './cursor.js';
import { mentionsCompleted, parseFilter, resolveFilter } from './filter.js';
import { LIST_ENVELOPE, toTask, type Context, type Task } from './tasks.service.js';

type Db = Kysely<Database>;

/** The list parameters a filter cannot be combined with. */
const NOT_WITH_FILTER = ['view', 'tag', 'q'] as const;

/** 400 when the request also names `view`, `tag` or `q` (`given`: the raw query). */
export function checkFilterAlone(given: Record<string, unknown>): void {
  const others = NOT_WITH_FILTER.filter((name) => given[name] !== undefined);
  if (others.length > 0)
    throw errors.validation(
      others.map((name) => ({ path: `/${name}`, message: 'cannot be combined with filter' })),
      'filter cannot be combined with view, tag or q',
    );
}

/**
 * GET /api/v1/tasks?filter=: the live tasks of any level matching the expression (open ones unless
 * it names `completed`), dates in the caller's zone now, in view=all's manual order with a keyset
 * cursor bound to the expression. One statement, the filter as one predicate.
 */
export async function listFilteredTasks(
  db: Db,
  ctx: Context,
  query: { filter: string; cursor?: string | undefined; limit: number },
): Promise<{ items: Task[]; nextCursor: string | null }> {
  const parsed = parseFilter(query.filter);
  const after = query.cursor === undefined ? null : filterCursor(query.cursor, query.filter);
  const rows = await filteredPage(db, {
    workspaceId: ctx.workspaceId,
    filter: resolveFilter(parsed, ctx.timezone, Date.now()),
    withCompleted: mentionsCompleted(parsed),
    after: after && { position: after.p, subtask: after.s, createdAt: after.c, id: after.i },
    limit: query.limit + 1,
  });
  const { entries, last, hasMore } = pageWithin(rows, query.limit, toTask, LIST_ENVELOPE);
  return {
    items: entries,
    nextCursor:
      hasMore && last
        ? encodeCursor({
            k: 'filter',
            h: queryDigest(query.filter),
            p: last.sort_position,
            s: last.subtask,
            c: last.created_at,
            i: last.id,
          })
        : null,
  };
}
