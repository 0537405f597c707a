import type { Kysely } from 'kysely';
import { emitEvent } from '@app/auth/webhooks';
import type { Database } from '../db/schema.js';

/** The webhook events of the meetings service, each with the scope that reads its resource. */
export const MEETING_EVENTS = {
  'note.updated': 'meetings:read',
  'meeting.updated': 'meetings:read',
  'item.created': 'meetings:read',
  'item.updated': 'meetings:read',
  'item.deleted': 'meetings:read',
} as const;

/**
 * Records the one event of a write in its transaction and returns `data`, which is what an API
 * key sees: a meeting is always built without privateNotes for it.
 */
export async function emit<T>(trx: Kysely<Database>, accountId: string, type: keyof typeof MEETING_EVENTS, data: T): Promise<T> {
  await emitEvent(trx, accountId, type, data);
  return data;
}
