import type { Kysely } from 'kysely';
import type { Database } from './schema.js';

/** Creates the account's personal workspace; returns its id. */
export async function createPersonalWorkspace(db: Kysely<Database>, accountId: string): Promise<string> {
  const row = await db
    .insertInto('workspaces')
    .values({ owner_account_id: accountId, name: 'Personal' })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** The caller's workspace: the oldest one the account owns (its personal workspace). */
export async function findPersonalWorkspace(db: Kysely<Database>, accountId: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('workspaces')
    .select('id')
    .where('owner_account_id', '=', accountId)
    .orderBy('created_at')
    .orderBy('id')
    .executeTakeFirst();
  return row?.id;
}
