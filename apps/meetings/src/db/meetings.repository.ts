import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.js';

/** Sort key of meeting lists: the date, with the undated parking lot after every date. */
const sortDate = sql<string>`coalesce(date, 'infinity'::date)`;

export interface NewMeeting {
  seriesId: string;
  date: string | null;
  startsAt: string | null;
  status: string;
  sharedNotes?: string;
  privateNotes?: string;
}

const values = (accountId: string, m: NewMeeting) => ({
  account_id: accountId,
  series_id: m.seriesId,
  date: m.date,
  starts_at: m.startsAt,
  status: m.status,
  ...(m.sharedNotes !== undefined ? { shared_notes: m.sharedNotes } : {}),
  ...(m.privateNotes !== undefined ? { private_notes: m.privateNotes } : {}),
});

/**
 * Inserts a dated occurrence or the parking lot unless the series already has a live one there
 * (the partial unique indexes decide races), then returns whichever row exists.
 */
export async function insertMeetingOrGet(db: Kysely<Database>, accountId: string, m: NewMeeting) {
  const inserted = await db
    .insertInto('meetings')
    .values(values(accountId, m))
    .onConflict((oc) =>
      m.date === null
        ? oc.column('series_id').where('date', 'is', null).where('deleted_at', 'is', null).doNothing()
        : oc.columns(['series_id', 'date']).where('date', 'is not', null).where('deleted_at', 'is', null).doNothing(),
    )
    .returningAll()
    .executeTakeFirst();
  if (inserted) return { row: inserted, created: true };
  let query = db.selectFrom('meetings').selectAll().where('series_id', '=', m.seriesId).where('deleted_at', 'is', null);
  query = m.date === null ? query.where('date', 'is', null) : query.where('date', '=', m.date);
  return { row: await query.executeTakeFirstOrThrow(), created: false };
}

/** A live meeting of the account, optionally locked for the rest of the transaction. */
export async function findMeeting(db: Kysely<Database>, accountId: string, id: string, forUpdate = false) {
  let query = db
    .selectFrom('meetings')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .where('deleted_at', 'is', null);
  if (forUpdate) query = query.forUpdate();
  return query.executeTakeFirst();
}

/** Locks a meeting row: every change to a meeting's item list serializes on it. */
export async function lockMeeting(db: Kysely<Database>, id: string): Promise<void> {
  await db.selectFrom('meetings').select('id').where('id', '=', id).forUpdate().executeTakeFirst();
}

export async function countLiveMeetings(db: Kysely<Database>, accountId: string): Promise<number> {
  const row = await db
    .selectFrom('meetings')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('account_id', '=', accountId)
    .where('deleted_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export interface MeetingFilter {
  seriesId?: string | undefined;
  status?: string | undefined;
  from?: string | undefined;
  to?: string | undefined;
  after?: string[] | undefined;
  limit: number;
}

export async function listMeetings(db: Kysely<Database>, accountId: string, f: MeetingFilter) {
  let query = db.selectFrom('meetings').selectAll().where('account_id', '=', accountId).where('deleted_at', 'is', null);
  if (f.seriesId !== undefined) query = query.where('series_id', '=', f.seriesId);
  if (f.status !== undefined) query = query.where('status', '=', f.status);
  if (f.from !== undefined || f.to !== undefined) query = query.where('date', 'is not', null);
  if (f.from !== undefined) query = query.where(sortDate, '>=', f.from);
  if (f.to !== undefined) query = query.where(sortDate, '<=', f.to);
  if (f.after) query = query.where(sql<boolean>`(${sortDate}, id) > (${f.after[0]}::date, ${f.after[1]}::uuid)`);
  return query.orderBy(sortDate).orderBy('id').limit(f.limit).execute();
}

/** The list sort key of a meeting row, for its cursor. */
export function meetingSortDate(row: { date: string | null }): string {
  return row.date ?? 'infinity';
}

export async function updateMeeting(
  db: Kysely<Database>,
  id: string,
  set: { status?: string; sharedNotes?: string; privateNotes?: string },
) {
  return db
    .updateTable('meetings')
    .set({
      ...(set.status !== undefined ? { status: set.status } : {}),
      ...(set.sharedNotes !== undefined ? { shared_notes: set.sharedNotes } : {}),
      ...(set.privateNotes !== undefined ? { private_notes: set.privateNotes } : {}),
      revision: sql<number>`revision + 1`,
      updated_at: sql<string>`now()`,
    })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function softDeleteMeeting(db: Kysely<Database>, accountId: string, id: string) {
  return db
    .updateTable('meetings')
    .set({ deleted_at: sql<string>`now()`, updated_at: sql<string>`now()` })
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .returningAll()
    .executeTakeFirst();
}

/** The latest COMPLETED live meeting of a series dated before `date`. */
export async function findPreviousCompleted(db: Kysely<Database>, seriesId: string, date: string) {
  return db
    .selectFrom('meetings')
    .selectAll()
    .where('series_id', '=', seriesId)
    .where('deleted_at', 'is', null)
    .where('status', '=', 'COMPLETED')
    .where('date', '<', date)
    .orderBy('date', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/** The earliest live SCHEDULED or IN_PROGRESS occurrence of a series dated after `date`. */
export async function findNextOpenOccurrence(db: Kysely<Database>, seriesId: string, afterDate: string) {
  return db
    .selectFrom('meetings')
    .selectAll()
    .where('series_id', '=', seriesId)
    .where('deleted_at', 'is', null)
    .where('status', 'in', ['SCHEDULED', 'IN_PROGRESS'])
    .where('date', '>', afterDate)
    .orderBy('date')
    .limit(1)
    .executeTakeFirst();
}

/** The latest date any occurrence of the series ever had (deleted ones too, so they are not resurrected). */
export async function latestOccurrenceDate(db: Kysely<Database>, seriesId: string): Promise<string | null> {
  const row = await db
    .selectFrom('meetings')
    .select((eb) => eb.fn.max('date').as('latest'))
    .where('series_id', '=', seriesId)
    .executeTakeFirst();
  return row?.latest ?? null;
}

/** SCHEDULED occurrences of a series dated on or after `fromDate`. */
export async function listScheduledFrom(db: Kysely<Database>, seriesId: string, fromDate: string) {
  return db
    .selectFrom('meetings')
    .select(['id', 'date'])
    .where('series_id', '=', seriesId)
    .where('deleted_at', 'is', null)
    .where('status', '=', 'SCHEDULED')
    .where('date', '>=', fromDate)
    .execute();
}

/** Sets new start instants, one statement for all rows. */
export async function setStartsAt(db: Kysely<Database>, updates: { id: string; startsAt: string }[]): Promise<void> {
  if (updates.length === 0) return;
  await sql`
    update meetings m set starts_at = v.starts_at, updated_at = now()
    from unnest(${updates.map((u) => u.id)}::uuid[], ${updates.map((u) => u.startsAt)}::timestamptz[]) as v(id, starts_at)
    where m.id = v.id`.execute(db);
}

/** The series' live parking lot, if it has one. */
export async function findParkingLot(db: Kysely<Database>, seriesId: string) {
  return db
    .selectFrom('meetings')
    .selectAll()
    .where('series_id', '=', seriesId)
    .where('date', 'is', null)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
}
