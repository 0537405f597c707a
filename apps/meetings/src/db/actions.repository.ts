import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.js';

export interface ActionFilter {
  personId?: string | undefined;
  openOnly: boolean;
  dueAfter?: string | undefined;
  dueBefore?: string | undefined;
  limit: number;
}

/**
 * OPEN-status ACTION items of live meetings, by due date (none last), then creation, with their
 * meeting, series title and person (the filtered one, else the series' first participant), in
 * one query served by the items_(open_)actions_idx partial indexes.
 */
export async function listActions(db: Kysely<Database>, accountId: string, f: ActionFilter) {
  const person = f.personId !== undefined ? sql`${f.personId}::uuid` : sql`s.participant_ids[1]`;
  let query = db
    .selectFrom('items as i')
    .innerJoin('meetings as m', 'm.id', 'i.meeting_id')
    .innerJoin('series as s', 's.id', 'm.series_id')
    .leftJoin('people as p', (join) => join.on(sql<boolean>`p.id = ${person}`).on('p.account_id', '=', accountId))
    .selectAll('i')
    .select([
      'm.date as meeting_date',
      'm.series_id as series_id',
      's.title as series_title',
      'p.id as person_id',
      'p.name as person_name',
    ])
    .where('i.account_id', '=', accountId)
    .where('i.kind', '=', 'ACTION')
    .where('i.status', '=', 'OPEN')
    .where('m.deleted_at', 'is', null);
  if (f.openOnly) query = query.where('i.completed_at', 'is', null);
  if (f.dueAfter !== undefined) query = query.where('i.due_date', '>=', f.dueAfter);
  if (f.dueBefore !== undefined) query = query.where('i.due_date', '<=', f.dueBefore);
  if (f.personId !== undefined) query = query.where(sql<boolean>`s.participant_ids @> array[${f.personId}::uuid]`);
  return query
    .orderBy(sql`i.due_date asc nulls last`)
    .orderBy('i.created_at')
    .orderBy('i.id')
    .limit(f.limit)
    .execute();
}
