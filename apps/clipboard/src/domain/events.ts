import type { Kysely } from 'kysely';
import { emitEvent, emitEvents, previousOf } from '@app/auth/webhooks';
import type { Database } from '../db/schema.js';
import type { ClipboardEvent } from '../events.js';

/**
 * Records an event in the write's transaction; returns `data` (the resource as the API returns
 * it). An update passes the resource as it was `before`: the event's `previous` holds what changed.
 */
export async function emit<T extends object>(
  trx: Kysely<Database>,
  accountId: string,
  type: ClipboardEvent,
  data: T,
  before?: T,
): Promise<T> {
  await emitEvent(trx, accountId, type, data, before && previousOf(before, data));
  return data;
}

/** One `*.deleted` event per removed id, in order (a bulk delete removes several records). */
export function emitDeleted(
  trx: Kysely<Database>,
  accountId: string,
  type: ClipboardEvent,
  ids: readonly string[],
): Promise<void> {
  return emitEvents(
    trx,
    accountId,
    ids.map((id) => ({ type, data: { id } })),
  );
}
