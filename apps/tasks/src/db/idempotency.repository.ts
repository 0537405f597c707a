import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from './schema.js';

type Db = Kysely<Database>;

/** How long a kept key answers with its first result (DESIGN.md: 24 h). */
const KEPT_FOR = sql`interval '24 hours'`;

/**
 * A key's first answer as the API sent it, versioned so its shape can change without a column
 * name or a row of the table ever becoming stored data: `{ v: 1, status, body }`.
 */
export interface Answer {
  v: 1;
  status: number;
  body: unknown;
}

/** A key's first answer and the request body's fingerprint. */
export interface KeptAnswer {
  fingerprint: string;
  answer: Answer;
}

/** The key of a create: whose it is, the client's key as its SHA-256, and the request body's fingerprint. */
export interface Key {
  accountId: string;
  keyHash: Buffer;
  fingerprint: string;
}

/**
 * The key's row, written with the create's answer (`answer` selects the new row's id and the
 * answer's JSON text); takes over a key kept more than 24 hours ago. Returns 1 when written.
 */
export function keepKey(key: Key, answer: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`
    insert into task_idempotency_keys as k (account_id, key_hash, fingerprint, task_id, status, response)
    select ${key.accountId}::uuid, ${key.keyHash}::bytea, ${key.fingerprint}::text, a.id, a.status, a.answer::json from (${answer}) a
    on conflict (account_id, key_hash) do update
      set fingerprint = excluded.fingerprint, task_id = excluded.task_id, status = excluded.status, response = excluded.response, created_at = now()
      where k.created_at < now() - ${KEPT_FOR}
    returning 1`;
}

/**
 * Removes up to `limit` expired keys of any account, oldest first (the worker's
 * `tasks-idempotency-sweep` job); replicas running it at once take different rows. Returns how many.
 */
export async function sweepExpiredKeys(db: Db, limit: number): Promise<number> {
  const result = await sql`
    delete from task_idempotency_keys k
    where (k.account_id, k.key_hash) in (
      select e.account_id, e.key_hash from task_idempotency_keys e
      where e.created_at < now() - ${KEPT_FOR}
      order by e.created_at limit ${limit} for update skip locked
    )`.execute(db);
  return Number(result.numAffectedRows ?? 0n);
}

/** The key's first answer within 24 hours, as a CTE or a query. */
export function keptAnswer(
  key: Pick<Key, 'accountId' | 'keyHash'>,
): RawBuilder<{ fingerprint: string; response: Answer }> {
  return sql`
    select k.fingerprint, k.response from task_idempotency_keys k
    where k.account_id = ${key.accountId} and k.key_hash = ${key.keyHash} and k.created_at >= now() - ${KEPT_FOR} and k.status is not null`;
}

/** The first answer kept for this key within 24 hours, if any. */
export async function findKeptAnswer(db: Db, key: Pick<Key, 'accountId' | 'keyHash'>): Promise<KeptAnswer | undefined> {
  const { rows } = await keptAnswer(key).execute(db);
  const row = rows[0];
  return row ? { fingerprint: row.fingerprint, answer: row.response } : undefined;
}
