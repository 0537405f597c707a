import { horizonStatement } from '@app/auth/streams';
import { MAX_PAGE_BYTES } from '@app/http-errors';
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

/**
 * The octets of a record's larger text columns: never more than its change's JSON (which holds
 * them, escaped; a tombstone holds none), so the page can be cut in SQL by them. A meeting's
 * private notes are left out (not every reader sees them), its items counted.
 */
const OCTETS: Record<FeedKind, string> = {
  note: "(octet_length(yesterday) + octet_length(today) + octet_length(array_to_string(impediments, '')) + octet_length(today_priority))",
  person: '(octet_length(name) + coalesce(octet_length(email), 0))',
  series: 'octet_length(title)',
  meeting:
    '(octet_length(shared_notes) + coalesce((select sum(octet_length(i.text) + octet_length(i.notes)) from items i where i.meeting_id = meetings.id), 0))',
};

/** One table's part of the feed: its rows after the cursor, below the horizon, tombstones from `keepFrom`; `bytes`, as in OCTETS. */
const part = (kind: FeedKind, table: string, tombstones: boolean) => `
  (select '${kind}' as kind, id, change_xid, ${tombstones ? 'deleted_at is not null' : 'false'} as deleted,
     ${tombstones ? `case when deleted_at is null then ${OCTETS[kind]} else 0 end` : OCTETS[kind]} as bytes
   from ${table}
   where account_id = $1 and (change_xid, id) > ($2::xid8, $3::uuid) and change_xid < h.x
     ${tombstones ? 'and (deleted_at is null or change_xid >= coalesce($4::xid8, h.x))' : ''}
   order by change_xid, id limit $5)`;

// People and series are archived, never deleted (an archived one is an upsert); notes and
// meetings are soft-deleted (a tombstone). Each part reads its <table>_changes_idx.
// Only the rows that start within MAX_PAGE_BYTES of those octets come, and the first that crosses
// it (so the caller sees the cut): no more than a page's worth of records is read afterwards.
const PAGE = horizonStatement(`
  select kind, id, change_xid, deleted from (
    select l.*, sum(l.bytes) over (order by l.change_xid, l.id) - l.bytes as bytes_before from (
      select * from (${[part('note', 'notes', true), part('person', 'people', false), part('series', 'series', false), part('meeting', 'meetings', true)].join(' union all ')}) u
      order by change_xid, id limit $5
    ) l
  ) w
  where w.bytes_before < ${MAX_PAGE_BYTES}
  order by change_xid, id`);

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
  const some = <T>(list: string[], load: () => Promise<T[]>) =>
    list.length === 0 ? Promise.resolve([] as T[]) : load();
  const [notes, people, series, meetings, items] = await Promise.all([
    some(ids.note, () =>
      db.selectFrom('notes').selectAll().where('account_id', '=', accountId).where('id', 'in', ids.note).execute(),
    ),
    some(ids.person, () =>
      db.selectFrom('people').selectAll().where('account_id', '=', accountId).where('id', 'in', ids.person).execute(),
    ),
    some(ids.series, () =>
      db.selectFrom('series').selectAll().where('account_id', '=', accountId).where('id', 'in', ids.series).execute(),
    ),
    some(ids.meeting, () =>
      db
        .selectFrom('meetings')
        .selectAll()
        .where('account_id', '=', accountId)
        .where('id', 'in', ids.meeting)
        .execute(),
    ),
    some(ids.meeting, () =>
      db
        .selectFrom('items')
        .selectAll()
        .where('account_id', '=', accountId)
        .where('meeting_id', 'in', ids.meeting)
        .execute(),
    ),
  ]);
  return { notes, people, series, meetings, items };
}
