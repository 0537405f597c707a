import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from './schema.js';
import { fromJson, type TaskRow } from './tasks.repository.js';

type Db = Kysely<Database>;

/** How long a kept key answers with its first result (DESIGN.md: 24 h). */
const KEPT_FOR = sql`interval '24 hours'`;

/** A key's first answer: the task its create made, as that create returned it, and the request body's fingerprint. */
export interface KeptAnswer {
  fingerprint: string;
  task: TaskRow;
}

/** The key of a create: whose it is, the client's key as its SHA-256, and the request body's fingerprint. */
export interface Key {
  accountId: string;
  keyHash: Buffer;
  fingerprint: string;
}

/** Expired keys one create removes (oldest first), so the table holds about a day of creates. */
const SWEEP = 8;

/** What a keyed create statement did: created the task, found the key's first answer, or lost the key to a concurrent create. */
export type KeyedOutcome = { created: TaskRow } | { kept: KeptAnswer } | 'taken';

/**
 * The key's row, written with the create's answer (`answer` selects the task's id and its row as
 * JSON); takes over a key kept more than 24 hours ago. Returns 1 when written.
 */
function keepKey(key: Key, answer: RawBuilder<unknown>) {
  return sql`
    insert into task_idempotency_keys as k (account_id, key_hash, fingerprint, task_id, status, response)
    select ${key.accountId}::uuid, ${key.keyHash}::bytea, ${key.fingerprint}::text, a.id, 201, a.row from (${answer}) a
    on conflict (account_id, key_hash) do update
      set fingerprint = excluded.fingerprint, task_id = excluded.task_id, status = excluded.status, response = excluded.response, created_at = now()
      where k.created_at < now() - ${KEPT_FOR}
    returning 1`;
}

/** Removes a few expired keys of any account (not this create's own), when `when` holds (a task was created). */
function sweepKeys(key: Key, when: RawBuilder<boolean>) {
  return sql`
    delete from task_idempotency_keys k
    where ${when} and (k.account_id, k.key_hash) in (
      select e.account_id, e.key_hash from task_idempotency_keys e
      where e.created_at < now() - ${KEPT_FOR} and not (e.account_id = ${key.accountId} and e.key_hash = ${key.keyHash})
      order by e.created_at limit ${SWEEP} for update skip locked
    )`;
}

/** The key's first answer within 24 hours, as a CTE or a query. */
function keptAnswer(key: Pick<Key, 'accountId' | 'keyHash'>) {
  return sql`
    select k.fingerprint, k.response from task_idempotency_keys k
    where k.account_id = ${key.accountId} and k.key_hash = ${key.keyHash} and k.created_at >= now() - ${KEPT_FOR} and k.status is not null`;
}

/** Postgres' error when the statement's own key row could not be written (see the 2026_11_25_1000 migration). */
const KEY_TAKEN = 'TK409';

/**
 * A keyed create in one statement, one implicit transaction: unless the key already holds an
 * answer (then returned as `kept`) or the insert's own condition fails (then nothing happens:
 * undefined), the task is inserted by `insert` (given the condition it adds to its own), and the key kept with it in the same
 * statement, which also sweeps a few expired keys. A concurrent create of the same key that
 * committed after this statement's snapshot makes the key's row impossible to write: the
 * statement then fails (`tasks_key_claimed`) and its task goes with it ('taken').
 */
export async function createOnce(db: Db, key: Key, insert: (condition: RawBuilder<boolean>) => RawBuilder<TaskRow>): Promise<KeyedOutcome | undefined> {
  let rows: (Partial<TaskRow> & { kept_fingerprint: string | null; kept_response: TaskRow | null })[];
  try {
    ({ rows } = await sql<Partial<TaskRow> & { kept_fingerprint: string | null; kept_response: TaskRow | null }>`
      with kept as (${keptAnswer(key)}),
      created as (${insert(sql<boolean>`not exists (select from kept)`)}),
      claimed as (${keepKey(key, sql`select c.id, row_to_json(c) as row from created c`)}),
      swept as (${sweepKeys(key, sql<boolean>`exists (select from created)`)})
      select c.*, kept.fingerprint as kept_fingerprint, kept.response as kept_response
      from (select) one left join created c on true left join kept on true
      where tasks_key_claimed(not exists (select from created) or exists (select from claimed))`.execute(db));
  } catch (err) {
    if ((err as { code?: unknown }).code === KEY_TAKEN) return 'taken';
    throw err;
  }
  const [row] = rows;
  if (row?.kept_fingerprint) return { kept: { fingerprint: row.kept_fingerprint, task: fromJson(row.kept_response!) } };
  if (!row?.id) return undefined;
  const { kept_fingerprint: _f, kept_response: _r, ...task } = row;
  return { created: task as TaskRow };
}

/**
 * Keeps the key with `task`, in the create's transaction (after its insert), and records `event`
 * (an expression such as a webhook emit, run only when the key was taken). Returns false when the
 * key is held: by an earlier create within 24 hours, or by a concurrent one, which this statement
 * waits for on the key's row until it commits or rolls back; the caller then rolls back. One
 * statement, which also sweeps a few expired keys of any account.
 */
export async function claimKey(trx: Db, key: Key, task: TaskRow, event: RawBuilder<unknown>): Promise<boolean> {
  const { rows } = await sql<{ claimed: boolean }>`
    with claimed as (${keepKey(key, sql`select ${task.id}::uuid as id, ${JSON.stringify(task)}::json as row`)}),
    swept as (${sweepKeys(key, sql<boolean>`true`)})
    select true as claimed, ${event} from claimed`.execute(trx);
  return rows.length > 0;
}

/** The first answer kept for this key within 24 hours, if any. */
export async function findKeptAnswer(db: Db, key: Pick<Key, 'accountId' | 'keyHash'>): Promise<KeptAnswer | undefined> {
  const { rows } = await sql<{ fingerprint: string; response: TaskRow }>`${keptAnswer(key)}`.execute(db);
  const row = rows[0];
  return row ? { fingerprint: row.fingerprint, task: fromJson(row.response) } : undefined;
}
