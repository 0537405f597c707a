import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.js';

type Db = Kysely<Database>;

/** How long a kept key answers with its first result (DESIGN.md: 24 h). */
const KEPT_FOR = sql`interval '24 hours'`;

/** A key's first answer as the create's transaction kept it. */
export interface KeptAnswer {
  fingerprint: string;
  status: number;
  body: unknown;
}

/**
 * Takes `keyHash` for the account in the create's transaction, or returns false when another
 * create holds it: a concurrent one waits here on the row until the first commits or rolls back.
 * The account's expired keys are dropped first, so the table holds only a day of creates.
 */
export async function claimKey(trx: Db, accountId: string, keyHash: Buffer, fingerprint: string): Promise<boolean> {
  await trx.deleteFrom('task_idempotency_keys').where('account_id', '=', accountId).where('created_at', '<', sql<Date>`now() - ${KEPT_FOR}`).execute();
  const row = await trx
    .insertInto('task_idempotency_keys')
    .values({ account_id: accountId, key_hash: keyHash, fingerprint, task_id: null, status: null, response: null })
    .onConflict((oc) => oc.columns(['account_id', 'key_hash']).doNothing())
    .returning('account_id')
    .executeTakeFirst();
  return row !== undefined;
}

/** Records the answer of the create that claimed the key (same transaction). */
export async function keepAnswer(trx: Db, accountId: string, keyHash: Buffer, taskId: string, status: number, body: unknown): Promise<void> {
  await trx
    .updateTable('task_idempotency_keys')
    .set({ task_id: taskId, status, response: JSON.stringify(body) })
    .where('account_id', '=', accountId)
    .where('key_hash', '=', keyHash)
    .execute();
}

/** The first answer kept for this key within 24 hours, if any. */
export async function findKeptAnswer(db: Db, accountId: string, keyHash: Buffer): Promise<KeptAnswer | undefined> {
  const row = await db
    .selectFrom('task_idempotency_keys')
    .select(['fingerprint', 'status', 'response'])
    .where('account_id', '=', accountId)
    .where('key_hash', '=', keyHash)
    .where('created_at', '>=', sql<Date>`now() - ${KEPT_FOR}`)
    .where('status', 'is not', null)
    .executeTakeFirst();
  return row ? { fingerprint: row.fingerprint, status: row.status!, body: row.response } : undefined;
}
