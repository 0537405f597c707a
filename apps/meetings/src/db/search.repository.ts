import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.js';

export interface SearchFilter {
  /** An ILIKE pattern, already escaped. */
  pattern: string;
  personId?: string | undefined;
  from?: string | undefined;
  to?: string | undefined;
  limit: number;
}

const personOf = (f: SearchFilter) => (f.personId !== undefined ? sql`${f.personId}::uuid` : sql`s.participant_ids[1]`);

/**
 * Meetings whose shared (and, only when `withPrivate`, private) notes match; newest first.
 * privateNotes are neither selected nor matched otherwise, so an API key's search never reads them.
 */
export async function searchMeetings(db: Kysely<Database>, accountId: string, f: SearchFilter, withPrivate: boolean) {
  let query = db
    .selectFrom('meetings as m')
    .innerJoin('series as s', 's.id', 'm.series_id')
    .leftJoin('people as p', (join) => join.on(sql<boolean>`p.id = ${personOf(f)}`).on('p.account_id', '=', accountId))
    .select(['m.id', 'm.date', 'm.shared_notes', 's.title', 'p.name as person_name'])
    .select((withPrivate ? sql<string>`m.private_notes` : sql<string>`''`).as('private_notes'))
    .where('m.account_id', '=', accountId)
    .where('m.deleted_at', 'is', null);
  query = withPrivate
    ? query.where((eb) => eb.or([eb('m.shared_notes', 'ilike', f.pattern), eb('m.private_notes', 'ilike', f.pattern)]))
    : query.where('m.shared_notes', 'ilike', f.pattern);
  if (f.personId !== undefined) query = query.where(sql<boolean>`s.participant_ids @> array[${f.personId}::uuid]`);
  if (f.from !== undefined) query = query.where('m.date', '>=', f.from);
  if (f.to !== undefined) query = query.where('m.date', '<=', f.to);
  return query
    .orderBy(sql`m.date desc nulls last`)
    .orderBy('m.id', 'desc')
    .limit(f.limit)
    .execute();
}

/** Items of live meetings whose text or notes match; `kinds` narrows by kind; newest meeting first. */
export async function searchItems(
  db: Kysely<Database>,
  accountId: string,
  f: SearchFilter,
  opts: { kinds: 'actions' | 'nonActions' | 'all'; openOnly: boolean },
) {
  let query = db
    .selectFrom('items as i')
    .innerJoin('meetings as m', 'm.id', 'i.meeting_id')
    .innerJoin('series as s', 's.id', 'm.series_id')
    .leftJoin('people as p', (join) => join.on(sql<boolean>`p.id = ${personOf(f)}`).on('p.account_id', '=', accountId))
    .select([
      'i.id',
      'i.meeting_id',
      'i.kind',
      'i.status',
      'i.completed_at',
      'i.text',
      'i.notes',
      'm.date',
      'p.id as person_id',
      'p.name as person_name',
    ])
    .where('i.account_id', '=', accountId)
    .where('m.deleted_at', 'is', null)
    .where((eb) => eb.or([eb('i.text', 'ilike', f.pattern), eb('i.notes', 'ilike', f.pattern)]));
  if (opts.kinds === 'actions') query = query.where('i.kind', '=', 'ACTION');
  if (opts.kinds === 'nonActions') query = query.where('i.kind', '<>', 'ACTION');
  if (opts.openOnly) query = query.where('i.completed_at', 'is', null);
  if (f.personId !== undefined) query = query.where(sql<boolean>`s.participant_ids @> array[${f.personId}::uuid]`);
  if (f.from !== undefined) query = query.where('m.date', '>=', f.from);
  if (f.to !== undefined) query = query.where('m.date', '<=', f.to);
  return query
    .orderBy(sql`m.date desc nulls last`)
    .orderBy('i.created_at', 'desc')
    .orderBy('i.id', 'desc')
    .limit(f.limit)
    .execute();
}

/** Live daily notes whose text matches; newest date first. */
export async function searchNotes(db: Kysely<Database>, accountId: string, f: SearchFilter) {
  let query = db
    .selectFrom('notes')
    .select(['date', 'yesterday', 'today', 'impediments', 'today_priority'])
    .where('account_id', '=', accountId)
    .where('deleted_at', 'is', null)
    .where('search_text', 'ilike', f.pattern);
  if (f.from !== undefined) query = query.where('date', '>=', f.from);
  if (f.to !== undefined) query = query.where('date', '<=', f.to);
  return query.orderBy('date', 'desc').limit(f.limit).execute();
}
