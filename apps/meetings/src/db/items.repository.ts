import { sql, type Kysely, type Updateable } from 'kysely';
import type { Database, ItemsTable } from './schema.js';

export interface NewItem {
  meetingId: string;
  parentId: string | null;
  kind: string;
  text: string;
  notes: string;
  starred: boolean;
  owner: string | null;
  dueDate: string | null;
  completedAt: string | null;
  carryCount: number;
  provenance: { fromItemId: string; fromMeetingId: string } | null;
  position: number;
}

const row = (accountId: string, i: NewItem) => ({
  account_id: accountId,
  meeting_id: i.meetingId,
  parent_id: i.parentId,
  kind: i.kind,
  text: i.text,
  notes: i.notes,
  starred: i.starred,
  owner: i.owner,
  due_date: i.dueDate,
  completed_at: i.completedAt,
  carry_count: i.carryCount,
  from_item_id: i.provenance?.fromItemId ?? null,
  from_meeting_id: i.provenance?.fromMeetingId ?? null,
  carried_at: i.provenance ? sql<string>`now()` : null,
  position: i.position,
});

/** Inserts items in one statement; returns them in the order given. */
export async function insertItems(db: Kysely<Database>, accountId: string, items: NewItem[]) {
  if (items.length === 0) return [];
  const rows = await db
    .insertInto('items')
    .values(items.map((i) => row(accountId, i)))
    .returningAll()
    .execute();
  return rows.sort((a, b) => a.position - b.position);
}

/**
 * An item of the account whose meeting is live, with its meeting's series id; `forUpdate` locks
 * the item row (concurrent carries of one item queue here and re-read its status).
 */
export async function findItem(db: Kysely<Database>, accountId: string, id: string, forUpdate = false) {
  let query = db
    .selectFrom('items as i')
    .innerJoin('meetings as m', 'm.id', 'i.meeting_id')
    .selectAll('i')
    .select(['m.series_id as series_id'])
    .where('i.account_id', '=', accountId)
    .where('i.id', '=', id)
    .where('m.deleted_at', 'is', null);
  if (forUpdate) query = query.forUpdate('i');
  return query.executeTakeFirst();
}

export async function listMeetingItems(db: Kysely<Database>, meetingId: string) {
  return db.selectFrom('items').selectAll().where('meeting_id', '=', meetingId).orderBy('position').execute();
}

export async function countMeetingItems(db: Kysely<Database>, meetingId: string): Promise<number> {
  const r = await db
    .selectFrom('items')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('meeting_id', '=', meetingId)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

/** The next free position among the siblings (top-level when parentId is null). */
export async function nextPosition(db: Kysely<Database>, meetingId: string, parentId: string | null): Promise<number> {
  let query = db
    .selectFrom('items')
    .select((eb) => eb.fn.max('position').as('p'))
    .where('meeting_id', '=', meetingId);
  query = parentId === null ? query.where('parent_id', 'is', null) : query.where('parent_id', '=', parentId);
  const r = await query.executeTakeFirst();
  return r?.p === null || r?.p === undefined ? 0 : Number(r.p) + 1;
}

export async function updateItem(db: Kysely<Database>, id: string, set: Updateable<ItemsTable>) {
  return db
    .updateTable('items')
    .set({ ...set, updated_at: sql<string>`now()` })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function deleteItem(db: Kysely<Database>, id: string): Promise<void> {
  await db.deleteFrom('items').where('id', '=', id).execute();
}

/** Open top-level talking points of a meeting in their order, locked for the transaction. */
export async function lockOpenTalkingPoints(db: Kysely<Database>, meetingId: string) {
  return db
    .selectFrom('items')
    .selectAll()
    .where('meeting_id', '=', meetingId)
    .where('parent_id', 'is', null)
    .where('kind', '=', 'TALKING_POINT')
    .where('status', '=', 'OPEN')
    .orderBy('position')
    .forUpdate()
    .execute();
}

export async function markCarried(db: Kysely<Database>, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await db
    .updateTable('items')
    .set({ status: 'CARRIED', updated_at: sql<string>`now()` })
    .where('id', 'in', ids)
    .execute();
}

/** Rewrites the positions of a meeting's top-level items to the order of `ids`, in one statement. */
export async function setTopLevelOrder(db: Kysely<Database>, meetingId: string, ids: string[]) {
  await sql`
    update items i set position = v.ord - 1, updated_at = now()
    from unnest(${ids}::uuid[]) with ordinality as v(id, ord)
    where i.id = v.id and i.meeting_id = ${meetingId} and i.parent_id is null`.execute(db);
  return db
    .selectFrom('items')
    .selectAll()
    .where('meeting_id', '=', meetingId)
    .where('parent_id', 'is', null)
    .orderBy('position')
    .execute();
}

/** The items of a meeting that the `previous` block shows, in one query. */
export async function listPreviousContext(db: Kysely<Database>, meetingId: string) {
  return db
    .selectFrom('items')
    .selectAll()
    .where('meeting_id', '=', meetingId)
    .where((eb) =>
      eb.or([
        eb.and([eb('kind', '=', 'TALKING_POINT'), eb('status', '=', 'OPEN')]),
        eb('kind', '=', 'DECISION'),
        eb.and([eb('kind', '=', 'ACTION'), eb('completed_at', 'is', null)]),
      ]),
    )
    .orderBy('position')
    .execute();
}
