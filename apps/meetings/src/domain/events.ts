import type { Kysely } from 'kysely';
import { emitEvent, previousOf } from '@app/auth/webhooks';
import type { Database } from '../db/schema.js';
import type { MeetingEvent } from '../events.js';

/**
 * Records the one event of a write in its transaction and returns `data`, which is what an API
 * key sees: a meeting is always built without privateNotes for it. An update passes the resource
 * as it was `before` (built the same way): the event's `previous` holds what the write changed.
 */
export async function emit<T extends object>(
  trx: Kysely<Database>,
  accountId: string,
  type: MeetingEvent,
  data: T,
  before?: T,
): Promise<T> {
  await emitEvent(trx, accountId, type, data, before && previousOf(before, data));
  return data;
}
