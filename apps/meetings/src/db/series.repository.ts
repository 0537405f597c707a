import { sql, type Kysely, type Updateable } from 'kysely';
import type { Database, SeriesTable, TemplateItem } from './schema.js';

export interface NewSeries {
  title: string;
  cadence: string;
  weekday: number | null;
  monthDay: number | null;
  startTime: string;
  durationMinutes: number;
  timezone: string;
  startDate: string;
  participantIds: string[];
  template: TemplateItem[];
}

export async function insertSeries(db: Kysely<Database>, accountId: string, s: NewSeries) {
  return db
    .insertInto('series')
    .values({
      account_id: accountId,
      title: s.title,
      cadence: s.cadence,
      weekday: s.weekday,
      month_day: s.monthDay,
      start_time: s.startTime,
      duration_minutes: s.durationMinutes,
      timezone: s.timezone,
      start_date: s.startDate,
      participant_ids: s.participantIds,
      template: JSON.stringify(s.template),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function findSeries(db: Kysely<Database>, accountId: string, id: string, forUpdate = false) {
  let query = db.selectFrom('series').selectAll().where('account_id', '=', accountId).where('id', '=', id);
  if (forUpdate) query = query.forUpdate();
  return query.executeTakeFirst();
}

export async function countActiveSeries(db: Kysely<Database>, accountId: string): Promise<number> {
  const row = await db
    .selectFrom('series')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('account_id', '=', accountId)
    .where('archived_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function listSeries(
  db: Kysely<Database>,
  accountId: string,
  opts: { includeArchived: boolean; limit: number; after?: string[] | undefined },
) {
  let query = db.selectFrom('series').selectAll().where('account_id', '=', accountId);
  if (!opts.includeArchived) query = query.where('archived_at', 'is', null);
  if (opts.after)
    query = query.where(sql<boolean>`(created_at, id) > (${opts.after[0]}::timestamptz, ${opts.after[1]}::uuid)`);
  return query.orderBy('created_at').orderBy('id').limit(opts.limit).execute();
}

export async function updateSeries(db: Kysely<Database>, id: string, values: Updateable<SeriesTable>) {
  return db
    .updateTable('series')
    .set({ ...values, updated_at: sql<string>`now()` })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function archiveSeries(db: Kysely<Database>, accountId: string, id: string) {
  return db
    .updateTable('series')
    .set({
      archived_at: sql<string>`coalesce(archived_at, now())`,
      updated_at: sql<string>`case when archived_at is null then now() else updated_at end`,
    })
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}
