import type { Kysely } from 'kysely';
import { emitEvent } from '@app/auth/webhooks';
import type { Database } from '../db/schema.js';
import type { MeetingEvent } from '../events.js';

/**
 * Records the one event of a write in its transaction and returns `data`, which is what an API
 * key sees: a meeting is always built without privateNotes for it.
 */
export async function emit<T>(trx: Kysely<Database>, accountId: string, type: MeetingEvent, data: T): Promise<T> {
  await emitEvent(trx, accountId, type, data);
  return data;
}
