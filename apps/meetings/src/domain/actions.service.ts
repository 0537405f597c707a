import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import * as repo from '../db/actions.repository.js';
import { toItem } from './views.js';

export interface ActionsQuery {
  personId?: string;
  openOnly?: string;
  dueAfter?: string;
  dueBefore?: string;
  limit: number;
}

/** Action items across the account's meetings, each with its meeting and person context. */
export async function listActions(db: Kysely<Database>, accountId: string, q: ActionsQuery) {
  const rows = await repo.listActions(db, accountId, {
    personId: q.personId,
    openOnly: q.openOnly === '1',
    dueAfter: q.dueAfter,
    dueBefore: q.dueBefore,
    limit: q.limit + 1,
  });
  return {
    actions: rows.slice(0, q.limit).map((r) => ({
      ...toItem(r),
      meeting: { id: r.meeting_id, date: r.meeting_date, seriesId: r.series_id, title: r.series_title },
      person: r.person_id !== null && r.person_name !== null ? { id: r.person_id, name: r.person_name } : null,
    })),
    hasMore: rows.length > q.limit,
  };
}
