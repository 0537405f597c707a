import { sql, type Kysely, type Selectable, type Transaction } from 'kysely';
import type { AccountStateTable, Database } from './schema.js';
import { inTransaction } from '@app/auth/runtime';
import { MAX_PAGE_BYTES } from '@app/http-errors';

export type Db = Kysely<Database>;
export type StateRow = Selectable<AccountStateTable>;
export type Entity = 'item' | 'snippet' | 'settings';
export type Op = 'upsert' | 'delete';

/** The latest logged change of one entity. */
export interface Latest {
  seq: number;
  op: Op;
}

/**
 * One write transaction of one account. It holds the account's state row lock from the start
 * (so writers of one account are serialized and seqs commit in order) and collects change-log
 * entries, written in one statement when the transaction's work is done.
 */
export class AccountTx {
  private seq: number;
  private readonly log = new Map<string, { seq: number; entity: Entity; id: string; op: Op }>();

  constructor(
    readonly trx: Transaction<Database>,
    readonly accountId: string,
    readonly state: StateRow,
    /** How long tombstones and sync receipts are kept (the domain's limit). */
    readonly tombstoneDays: number,
  ) {
    this.seq = state.seq;
  }

  /** Logs a change and returns its seq. A later change of the same entity replaces the earlier one. */
  record(entity: Entity, id: string, op: Op): number {
    this.seq += 1;
    const key = `${entity}:${id}`;
    this.log.delete(key);
    this.log.set(key, { seq: this.seq, entity, id, op });
    return this.seq;
  }

  /** The latest change of an entity logged in this transaction, if any. */
  pending(entity: Entity, id: string): Latest | undefined {
    const entry = this.log.get(`${entity}:${id}`);
    return entry && { seq: entry.seq, op: entry.op };
  }

  /** Writes the collected changes (collapsing superseded rows), the new seq, and drops old tombstones. */
  async flush(): Promise<void> {
    if (this.log.size === 0) return;
    const entries = [...this.log.values()];
    await sql`
      insert into changes (account_id, seq, entity, entity_id, op)
      select ${this.accountId}::uuid, s, e, i, o
      from unnest(${entries.map((e) => e.seq)}::bigint[], ${entries.map((e) => e.entity)}::text[],
                  ${entries.map((e) => e.id)}::uuid[], ${entries.map((e) => e.op)}::text[]) as t(s, e, i, o)
      on conflict (account_id, entity, entity_id)
      do update set seq = excluded.seq, op = excluded.op, changed_at = now()`.execute(this.trx);
    // The same close-out as create_item's: old tombstones dropped, the new seq stored.
    await sql`select close_changes(${this.accountId}, ${this.seq}, ${this.tombstoneDays})`.execute(this.trx);
  }
}

/**
 * Runs `work` in a transaction holding the account's state row (created on first use) locked;
 * tombstones older than `tombstoneDays` are dropped when it closes. Every write of the service
 * goes through here.
 */
export async function withAccount<T>(
  db: Db,
  accountId: string,
  tombstoneDays: number,
  work: (tx: AccountTx) => Promise<T>,
): Promise<T> {
  return inTransaction(db, async (trx) => {
    const state = await trx
      .insertInto('account_state')
      .values({ account_id: accountId })
      .onConflict((oc) => oc.column('account_id').doUpdateSet({ account_id: accountId }))
      .returningAll()
      .executeTakeFirstOrThrow();
    const tx = new AccountTx(trx, accountId, state, tombstoneDays);
    const result = await work(tx);
    await tx.flush();
    return result;
  });
}

/** The account's state row, or undefined before its first write. */
export async function findState(db: Db | Transaction<Database>, accountId: string): Promise<StateRow | undefined> {
  return db.selectFrom('account_state').selectAll().where('account_id', '=', accountId).executeTakeFirst();
}

/** Updates settings columns; returns the row. */
export async function updateSettings(
  tx: AccountTx,
  patch: Partial<
    Pick<StateRow, 'history_limit' | 'retention_days' | 'capture_enabled' | 'sensitive_ttl_seconds' | 'seal_salt'>
  >,
): Promise<StateRow> {
  return tx.trx
    .updateTable('account_state')
    .set({ ...patch, settings_updated_at: sql<string>`clock_timestamp()` })
    .where('account_id', '=', tx.accountId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** The latest logged change of each of `ids` (committed before this transaction's own). */
export async function latestChanges(tx: AccountTx, entity: Entity, ids: string[]): Promise<Map<string, Latest>> {
  const map = new Map<string, Latest>();
  if (ids.length === 0) return map;
  const rows = await tx.trx
    .selectFrom('changes')
    .select(['entity_id', 'seq', 'op'])
    .where('account_id', '=', tx.accountId)
    .where('entity', '=', entity)
    .where('entity_id', 'in', ids)
    .execute();
  for (const r of rows) map.set(r.entity_id, { seq: r.seq, op: r.op as Op });
  return map;
}

/** A change-log row with the current state of its entity (null columns for tombstones). */
export interface ChangeRow {
  seq: number;
  entity: Entity;
  entity_id: string;
  op: Op;
  i_type: string | null;
  i_content: string | null;
  i_source: string | null;
  i_favorite: boolean | null;
  i_sensitive: boolean | null;
  i_expires_at: string | null;
  i_key_id: string | null;
  i_dedupe_key: string | null;
  i_created_at: string | null;
  i_updated_at: string | null;
  s_name: string | null;
  s_content: string | null;
  s_keyword: string | null;
  s_created_at: string | null;
  s_updated_at: string | null;
  st_history_limit: number | null;
  st_retention_days: number | null;
  st_capture_enabled: boolean | null;
  st_sensitive_ttl_seconds: number | null;
  st_seal_salt: string | null;
  st_updated_at: string | null;
}

/**
 * Changes after `afterSeq` in seq order (at most `limit`), joined with their entities' current
 * rows: the log keeps one row per entity, so the current row is the state at that seq. Only the
 * changes that start within MAX_PAGE_BYTES of content come, and the first that crosses it (so the
 * caller sees the cut): no more than a page's worth of content is read into the process.
 */
export async function changesAfter(
  db: Db,
  accountId: string,
  afterSeq: number,
  entities: Entity[],
  limit: number,
): Promise<ChangeRow[]> {
  const { rows } = await sql<ChangeRow>`
    select * from (
      select l.*, sum(l.bytes) over (order by l.seq) - l.bytes as bytes_before from (
        select c.seq, c.entity, c.entity_id, c.op,
          i.type as i_type, i.content as i_content, i.source as i_source, i.favorite as i_favorite,
          i.sensitive as i_sensitive, i.expires_at as i_expires_at, i.key_id as i_key_id, i.dedupe_key as i_dedupe_key,
          i.created_at as i_created_at, i.updated_at as i_updated_at,
          s.name as s_name, s.content as s_content, s.keyword as s_keyword,
          s.created_at as s_created_at, s.updated_at as s_updated_at,
          st.history_limit as st_history_limit, st.retention_days as st_retention_days,
          st.capture_enabled as st_capture_enabled, st.sensitive_ttl_seconds as st_sensitive_ttl_seconds, st.seal_salt as st_seal_salt,
          st.settings_updated_at as st_updated_at,
          coalesce(octet_length(i.content), 0) + coalesce(octet_length(s.content), 0) as bytes
        from changes c
        left join items i on c.entity = 'item' and c.op = 'upsert' and i.id = c.entity_id
        left join snippets s on c.entity = 'snippet' and c.op = 'upsert' and s.id = c.entity_id
        left join account_state st on c.entity = 'settings' and c.op = 'upsert' and st.account_id = c.account_id
        where c.account_id = ${accountId} and c.seq > ${afterSeq} and c.entity = any(${entities}::text[])
        order by c.seq
        limit ${limit}
      ) l
    ) w
    where bytes_before < ${MAX_PAGE_BYTES}
    order by seq`.execute(db);
  return rows;
}

export interface Receipt {
  client_change_id: string;
  status: string;
  seq: number | null;
  error: string | null;
}

/** Receipts of earlier sync changes among `ids`; receipts older than the tombstone window are dropped first. */
export async function findReceipts(tx: AccountTx, ids: string[]): Promise<Map<string, Receipt>> {
  await tx.trx
    .deleteFrom('sync_receipts')
    .where('account_id', '=', tx.accountId)
    .where('created_at', '<', sql<string>`now() - make_interval(days => ${tx.tombstoneDays})`)
    .execute();
  const map = new Map<string, Receipt>();
  if (ids.length === 0) return map;
  const rows = await tx.trx
    .selectFrom('sync_receipts')
    .select(['client_change_id', 'status', 'seq', 'error'])
    .where('account_id', '=', tx.accountId)
    .where('client_change_id', 'in', ids)
    .execute();
  for (const r of rows) map.set(r.client_change_id, r);
  return map;
}

/** Stores the receipts of a sync batch in one statement. */
export async function insertReceipts(tx: AccountTx, receipts: Receipt[]): Promise<void> {
  if (receipts.length === 0) return;
  await tx.trx
    .insertInto('sync_receipts')
    .values(receipts.map((r) => ({ account_id: tx.accountId, ...r })))
    .execute();
}
