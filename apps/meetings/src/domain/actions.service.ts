import { pageWithin } from '@app/http-errors';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import * as repo from '../db/actions.repository.js';
import { PAGE_ENVELOPE } from './cursor.js';
import { toItem, type Item } from './views.js';
import type { Shape } from '@app/http-errors/validation';
import type { actionsQuery } from './search.schemas.js';

export type ActionsQuery = Shape<typeof actionsQuery>;

/** An action item with the meeting it belongs to and that meeting's person (null for a daily note's). */
type Action = Item & {
  meeting: { id: string; date: string | null; seriesId: string; title: string };
  person: { id: string; name: string } | null;
};

/**
 * Action items across the account's meetings, each with its meeting and person context: at most
 * MAX_PAGE_BYTES of JSON, fewer actions and `hasMore` beyond that.
 */
export async function listActions(db: Kysely<Database>, accountId: string, q: ActionsQuery) {
  const rows = await repo.listActions(db, accountId, {
    personId: q.personId,
    openOnly: q.openOnly === '1',
    dueAfter: q.dueAfter,
    dueBefore: q.dueBefore,
    limit: q.limit + 1,
  });
  const { entries, hasMore } = pageWithin(
    rows,
    q.limit,
    (r) => {
      // Context added to the item, not spread into a copy (a spread per row costs more than the row).
      const action = toItem(r) as Action;
      action.meeting = { id: r.meeting_id, date: r.meeting_date, seriesId: r.series_id, title: r.series_title };
      action.person = r.person_id !== null && r.person_name !== null ? { id: r.person_id, name: r.person_name } : null;
      return action;
    },
    PAGE_ENVELOPE,
  );
  return { actions: entries, hasMore };
}
