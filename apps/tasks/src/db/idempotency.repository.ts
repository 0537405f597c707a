import { sql, type Kysely, type RawBuilder } from 'kysely';
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

/** Expired keys one create removes (oldest first), so the table holds about a day of creates. */
const SWEEP = 8;

/**
 * Keeps `keyHash` for the account with the create's answer, in the create's transaction (after
 * its insert), and records `event` (an expression such as a webhook emit, run only when the key
 * was taken). Returns false when the key is held: by an earlier create within 24 hours, or by a
 * concurrent one, which this statement waits for on the key's row until it commits or rolls
 * back; the caller then rolls back. An expired key is taken over. One statement, which also
 * sweeps a few expired keys of any account.
 */
export async function claimKey(trx: Db, accountId: string, keyHash: Buffer, answer: KeptAnswer & { taskId: string }, event: RawBuilder<unknown>): Promise<boolean> {
  const { rows } = await sql<{ claimed: boolean }>`
    with swept as (
      delete from task_idempotency_keys k
      where (k.account_id, k.key_hash) in (
        select e.account_id, e.key_hash from task_idempotency_keys e
        where e.created_at < now() - ${KEPT_FOR} and not (e.account_id = ${accountId} and e.key_hash = ${keyHash})
        order by e.created_at limit ${SWEEP} for update skip locked
      )
    ), claimed as (
      insert into task_idempotency_keys as k (account_id, key_hash, fingerprint, task_id, status, response)
      values (${accountId}, ${keyHash}, ${answer.fingerprint}, ${answer.taskId}, ${answer.status}, ${JSON.stringify(answer.body)})
      on conflict (account_id, key_hash) do update
        set fingerprint = excluded.fingerprint, task_id = excluded.task_id, status = excluded.status, response = excluded.response, created_at = now()
        where k.created_at < now() - ${KEPT_FOR}
      returning 1
    )
    select true as claimed, ${event} from claimed`.execute(trx);
  return rows.length > 0;
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
