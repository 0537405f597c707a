import { sql, type Selectable } from 'kysely';
import type { SnippetsTable } from './schema.js';
import type { AccountTx, Db } from './state.repository.js';

export type SnippetRow = Omit<Selectable<SnippetsTable>, 'account_id'>;

const columns = ['id', 'name', 'content', 'keyword', 'created_at', 'updated_at'] as const;
const now = sql<string>`clock_timestamp()`;

/** Every snippet of the account, by name ignoring case, then id. */
export async function listSnippets(db: Db | AccountTx['trx'], accountId: string): Promise<SnippetRow[]> {
  return db
    .selectFrom('snippets')
    .select(columns)
    .where('account_id', '=', accountId)
    .orderBy(sql`lower(name)`)
    .orderBy('id')
    .execute();
}

/** How many snippets the account has (at most 200 rows through the account index). */
export async function countSnippets(tx: AccountTx): Promise<number> {
  const row = await tx.trx
    .selectFrom('snippets')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('account_id', '=', tx.accountId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Another snippet of the account with this keyword, ignoring case. */
export async function findByKeyword(
  tx: AccountTx,
  keyword: string,
  exceptId?: string,
): Promise<SnippetRow | undefined> {
  let query = tx.trx
    .selectFrom('snippets')
    .select(columns)
    .where('account_id', '=', tx.accountId)
    .where(sql`lower(keyword)`, '=', keyword.toLowerCase());
  if (exceptId) query = query.where('id', '<>', exceptId);
  return query.executeTakeFirst();
}

export interface SnippetValues {
  id: string;
  name: string;
  content: string;
  keyword: string | null;
}

/** Inserts a snippet; undefined when the id is taken (by any account). */
export async function insertSnippet(tx: AccountTx, s: SnippetValues): Promise<SnippetRow | undefined> {
  return tx.trx
    .insertInto('snippets')
    .values({ ...s, account_id: tx.accountId, created_at: now, updated_at: now })
    .onConflict((oc) => oc.column('id').doNothing())
    .returning(columns)
    .executeTakeFirst();
}

/** Inserts rows with their timestamps as given (replacing the set keeps kept snippets' times). */
export async function insertSnippetRows(tx: AccountTx, rows: SnippetRow[]): Promise<void> {
  if (rows.length === 0) return;
  await tx.trx
    .insertInto('snippets')
    .values(rows.map((r) => ({ ...r, account_id: tx.accountId })))
    .execute();
}

export async function updateSnippet(tx: AccountTx, s: SnippetValues): Promise<SnippetRow> {
  return tx.trx
    .updateTable('snippets')
    .set({ name: s.name, content: s.content, keyword: s.keyword, updated_at: now })
    .where('account_id', '=', tx.accountId)
    .where('id', '=', s.id)
    .returning(columns)
    .executeTakeFirstOrThrow();
}

/** Deletes this account's snippets among `ids` (all of them when `ids` is 'all'); returns the deleted ids. */
export async function deleteSnippets(tx: AccountTx, ids: string[] | 'all'): Promise<string[]> {
  let query = tx.trx.deleteFrom('snippets').where('account_id', '=', tx.accountId);
  if (ids !== 'all') {
    if (ids.length === 0) return [];
    query = query.where('id', 'in', ids);
  }
  const rows = await query.returning('id').execute();
  return rows.map((r) => r.id);
}

/** The database clock, for rows written with explicit timestamps. */
export async function clock(tx: AccountTx): Promise<string> {
  const { rows } = await sql<{ now: string }>`select clock_timestamp() as now`.execute(tx.trx);
  return rows[0]!.now;
}

/** This account's snippets among `ids`. */
export async function findSnippets(tx: AccountTx, ids: string[]): Promise<SnippetRow[]> {
  if (ids.length === 0) return [];
  return tx.trx
    .selectFrom('snippets')
    .select(columns)
    .where('account_id', '=', tx.accountId)
    .where('id', 'in', ids)
    .execute();
}
