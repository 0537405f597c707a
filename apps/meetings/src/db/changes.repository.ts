import { horizonStatement } from '@app/auth/streams';
import { CompiledQuery, type Kysely } from 'kysely';
import type { Database } from './schema.js';

type Db = Kysely<Database>;

export type FeedKind = 'note' | 'person' | 'series' | 'meeting';

/** A feed row: which record, its place in the feed, and whether it is a tombstone. */
export interface FeedRow {
  kind: FeedKind;
  id: string;
  change_xid: string;
  deleted: boolean;
}

/** One table's part of the feed: its rows after the cursor, below the horizon, tombstones from `keepFrom`. */
const part = (kind: FeedKind, table: string, tombstones: boolean) => `
  (select '${kind}' as kind, id, change_xid, ${tombstones ? 'deleted_at is not null' : 'false'} as deleted from ${table}
   where account_id = $1 and (change_xid, id) > ($2::xid8, $3::uuid) and change_xid < h.x
     ${tombstones ? 'and (deleted_at is null or change_xid >= coalesce($4::xid8, h.x))' : ''}
   order by change_xid, id limit $5)`;

// People and series are archived, never deleted (an archived one is an upsert); notes and
// meetings are soft-deleted (a tombstone). Each part reads its <table>_changes_idx.
const PAGE = horizonStatement(`
  select * from (${[part('note', 'notes', true), part('person', 'people', false), part('series', 'series', false), part('meeting', 'meetings', true)].join(' union all ')}) u
  order by change_xid, id limit $5`);

/**
 * One page of the account's changes feed across notes, people, series and meetings, in
 * (change_xid, id) order after `after`, with the horizon of the same snapshot (see
 * @app/auth/streams' window). Tombstones stamped below `keepFrom` are left out (null: the
 * horizon, for a first sync).
 */
export async function changesPage(
  db: Db,
  p: { accountId: string; after: { xid: string; id: string }; keepFrom: string | null; limit: number },
): Promise<{ horizon: string; rows: FeedRow[] }> {
  const { rows } = await db.executeQuery<FeedRow & { horizon: string; id: string | null }>(
    CompiledQuery.raw(PAGE, [p.accountId, p.after.xid, p.after.id, p.keepFrom, p.limit]),
  );
  return { horizon: rows[0]!.horizon, rows: rows.filter((r): r is FeedRow & { horizon: string } => r.id !== null) };
}

/** The current rows of the changed records (soft-deleted ones too), with the items of the meetings. */
export async function changedRecords(db: Db, accountId: string, ids: Record<FeedKind, string[]>) {
  const some = <T>(list: string[], load: () => Promise<T[]>) => (list.length === 0 ? Promise.resolve([] as T[]) : load());
  const [notes, people, series, meetings, items] = await Promise.all([
    some(ids.note, () => db.selectFrom('notes').selectAll().where('account_id', '=', accountId).where('id', 'in', ids.note).execute()),
    some(ids.person, () => db.selectFrom('people').selectAll().where('account_id', '=', accountId).where('id', 'in', ids.person).execute()),
    some(ids.series, () => db.selectFrom('series').selectAll().where('account_id', '=', accountId).where('id', 'in', ids.series).execute()),
    some(ids.meeting, () => db.selectFrom('meetings').selectAll().where('account_id', '=', accountId).where('id', 'in', ids.meeting).execute()),
    some(ids.meeting, () => db.selectFrom('items').selectAll().where('account_id', '=', accountId).where('meeting_id', 'in', ids.meeting).execute()),
  ]);
  return { notes, people, series, meetings, items };
}
