import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.js';

export async function insertPerson(
  db: Kysely<Database>,
  accountId: string,
  values: { name: string; email: string | null },
) {
  return db
    .insertInto('people')
    .values({ account_id: accountId, name: values.name, email: values.email })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function findPerson(db: Kysely<Database>, accountId: string, id: string, forUpdate = false) {
  let query = db.selectFrom('people').selectAll().where('account_id', '=', accountId).where('id', '=', id);
  if (forUpdate) query = query.forUpdate();
  return query.executeTakeFirst();
}

/** The account's people among `ids` (one query, whatever the count). */
export async function findPeople(db: Kysely<Database>, accountId: string, ids: readonly string[]) {
  if (ids.length === 0) return [];
  return db.selectFrom('people').selectAll().where('account_id', '=', accountId).where('id', 'in', ids).execute();
}

export async function countActivePeople(db: Kysely<Database>, accountId: string): Promise<number> {
  const row = await db
    .selectFrom('people')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('account_id', '=', accountId)
    .where('archived_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function listPeople(
  db: Kysely<Database>,
  accountId: string,
  opts: { includeArchived: boolean; limit: number; after?: string[] | undefined },
) {
  let query = db.selectFrom('people').selectAll().where('account_id', '=', accountId);
  if (!opts.includeArchived) query = query.where('archived_at', 'is', null);
  if (opts.after)
    query = query.where(sql<boolean>`(created_at, id) > (${opts.after[0]}::timestamptz, ${opts.after[1]}::uuid)`);
  return query.orderBy('created_at').orderBy('id').limit(opts.limit).execute();
}

export async function updatePerson(
  db: Kysely<Database>,
  id: string,
  values: { name?: string; email?: string | null; archived?: boolean },
) {
  return db
    .updateTable('people')
    .set({
      ...(values.name !== undefined ? { name: values.name } : {}),
      ...(values.email !== undefined ? { email: values.email } : {}),
      ...(values.archived === true ? { archived_at: sql<string>`coalesce(archived_at, now())` } : {}),
      ...(values.archived === false ? { archived_at: null } : {}),
      updated_at: sql<string>`now()`,
    })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}
