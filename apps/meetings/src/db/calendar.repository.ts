import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.js';

/** Sets the account's feed token (hash), replacing the one it had. */
export async function putFeed(db: Kysely<Database>, accountId: string, tokenHash: string): Promise<void> {
  await db
    .insertInto('calendar_feeds')
    .values({ account_id: accountId, token_hash: tokenHash })
    .onConflict((oc) => oc.column('account_id').doUpdateSet({ token_hash: tokenHash, created_at: sql<string>`now()` }))
    .execute();
}

/** Removes the account's feed; false when it had none. */
export async function deleteFeed(db: Kysely<Database>, accountId: string): Promise<boolean> {
  const r = await db.deleteFrom('calendar_feeds').where('account_id', '=', accountId).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

/** The account whose feed token hashes to `tokenHash`, if any. */
export async function findFeedAccount(db: Kysely<Database>, tokenHash: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('calendar_feeds')
    .select('account_id')
    .where('token_hash', '=', tokenHash)
    .executeTakeFirst();
  return row?.account_id;
}

/**
 * The account's live meetings starting from `daysBack` days ago to `daysAhead` days ahead, with
 * their series' title, by date. The dates (a day wider each side, as a local date is within a day
 * of UTC) use the expression and predicate of meetings_account_list_idx: one index range scan.
 */
export async function listFeedMeetings(db: Kysely<Database>, accountId: string, daysBack: number, daysAhead: number) {
  const from = sql`current_date - ${daysBack + 1}::int`;
  const to = sql`current_date + ${daysAhead + 1}::int`;
  return db
    .selectFrom('meetings as m')
    .innerJoin('series as s', 's.id', 'm.series_id')
    .select(['m.id', 'm.starts_at', 'm.updated_at', 's.title', 's.duration_minutes'])
    .where('m.account_id', '=', accountId)
    .where('m.deleted_at', 'is', null)
    .where(sql<boolean>`coalesce(m.date, 'infinity'::date) between ${from} and ${to}`)
    .where(
      sql<boolean>`m.starts_at between now() - make_interval(days => ${daysBack}::int) and now() + make_interval(days => ${daysAhead}::int)`,
    )
    .orderBy(sql`coalesce(m.date, 'infinity'::date)`)
    .orderBy('m.id')
    .execute();
}

/** The OPEN top-level talking points of `meetingIds`, in order: one query for the whole feed. */
export async function listTalkingPoints(db: Kysely<Database>, meetingIds: string[]) {
  if (meetingIds.length === 0) return [];
  return db
    .selectFrom('items')
    .select(['meeting_id', 'text'])
    .where('meeting_id', 'in', meetingIds)
    .where('parent_id', 'is', null)
    .where('kind', '=', 'TALKING_POINT')
    .orderBy('meeting_id')
    .orderBy('position')
    .execute();
}
