import { horizonStatement } from '@app/auth/streams';
import { CompiledQuery, sql, type Kysely, type Selectable } from 'kysely';
import type { Database, __Resource__Table } from './schema.js';

type Db = Kysely<Database>;
export type __Resource__Row = Selectable<__Resource__Table>;

/** The account's live __resource__ `id`, or undefined. */
export function find__Resource__(db: Db, accountId: string, id: string): Promise<__Resource__Row | undefined> {
  return db
    .selectFrom('__name__')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
}

/** A page of the account's live records in (created_at, id) order after `after` (__name___account_idx). */
export function list__Title__(
  db: Db,
  accountId: string,
  opts: { limit: number; after?: readonly [string, string] | undefined },
): Promise<__Resource__Row[]> {
  let query = db.selectFrom('__name__').selectAll().where('account_id', '=', accountId).where('deleted_at', 'is', null);
  if (opts.after)
    query = query.where(sql<boolean>`(created_at, id) > (${opts.after[0]}::timestamptz, ${opts.after[1]}::uuid)`);
  return query.orderBy('created_at').orderBy('id').limit(opts.limit).execute();
}

export function insert__Resource__(
  db: Db,
  accountId: string,
  values: { title: string; url: string | null },
): Promise<__Resource__Row> {
  return db
    .insertInto('__name__')
    .values({ account_id: accountId, ...values })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Changes the account's live __resource__ `id`; undefined when there is none. */
export function update__Resource__(
  db: Db,
  accountId: string,
  id: string,
  values: { title?: string; url?: string | null },
): Promise<__Resource__Row | undefined> {
  return db
    .updateTable('__name__')
    .set({ ...values, updated_at: sql<string>`now()` })
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .returningAll()
    .executeTakeFirst();
}

/** Turns the account's live __resource__ `id` into a tombstone; undefined when there is none. */
export function delete__Resource__(db: Db, accountId: string, id: string): Promise<__Resource__Row | undefined> {
  return db
    .updateTable('__name__')
    .set({ deleted_at: sql<string>`now()`, updated_at: sql<string>`now()` })
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .returningAll()
    .executeTakeFirst();
}

/** A feed row: the record, its place in the feed, and whether it is a tombstone. */
export type ChangeRow = __Resource__Row & { deleted: boolean };

// Only rows stamped below the horizon (h.x) are final; tombstones stamped below $4 (the client's
// window start) are left out. One statement, so the horizon and the rows share a snapshot.
const CHANGES_PAGE = horizonStatement(`
  select r.*, r.change_xid::text as change_xid, r.deleted_at is not null as deleted
  from __name__ r
  where r.account_id = $1 and (r.change_xid, r.id) > ($2::xid8, $3::uuid) and r.change_xid < h.x
    and (r.deleted_at is null or r.change_xid >= coalesce($4::xid8, h.x))
  order by r.change_xid, r.id
  limit $5`);

/**
 * One page of the account's changes feed, in (change_xid, id) order after `after`, and the horizon
 * of the same snapshot (see @app/auth/streams' window); __name___changes_idx.
 */
export async function changesPage(
  db: Db,
  p: { accountId: string; after: { xid: string; id: string }; keepFrom: string | null; limit: number },
): Promise<{ horizon: string; rows: ChangeRow[] }> {
  const { rows } = await db.executeQuery<ChangeRow & { horizon: string; id: string | null }>(
    CompiledQuery.raw(CHANGES_PAGE, [p.accountId, p.after.xid, p.after.id, p.keepFrom, p.limit]),
  );
  return { horizon: rows[0]!.horizon, rows: rows.filter((r): r is ChangeRow & { horizon: string } => r.id !== null) };
}
