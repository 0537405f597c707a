import { sql, type Kysely } from 'kysely';
import type { Database, TaskConnectionStartsTable, TaskConnectionsTable } from './schema.js';

// The account's connection to tasks and the authorization requests under way (sealed tokens only).

/** The sealed tokens of a connection and when the access token expires. */
type Tokens = Pick<TaskConnectionsTable, 'access_token' | 'refresh_token' | 'access_expires_at'>;

/** How long an authorization request may wait for its callback. */
const START_TTL = '10 minutes';

/** Records an authorization request; the account's stale ones go with it. */
export async function insertStart(db: Kysely<Database>, row: Omit<TaskConnectionStartsTable, 'created_at'>) {
  await db
    .deleteFrom('task_connection_starts')
    .where('account_id', '=', row.account_id)
    .where('created_at', '<', sql<string>`now() - ${START_TTL}::interval`)
    .execute();
  await db.insertInto('task_connection_starts').values(row).execute();
}

/** The account's authorization request named by `stateHash`, consumed: a state answers once, within 10 minutes. */
export async function takeStart(db: Kysely<Database>, accountId: string, stateHash: string) {
  return db
    .deleteFrom('task_connection_starts')
    .where('state_hash', '=', stateHash)
    .where('account_id', '=', accountId)
    .where('created_at', '>=', sql<string>`now() - ${START_TTL}::interval`)
    .returning(['tasks_url', 'client_id', 'redirect_uri', 'verifier'])
    .executeTakeFirst();
}

export type ConnectionRow = Awaited<ReturnType<typeof findConnection>>;

export async function findConnection(db: Kysely<Database>, accountId: string) {
  return db
    .selectFrom('task_connections')
    .select([
      'account_id',
      'tasks_url',
      'client_id',
      'access_token',
      'refresh_token',
      'access_expires_at',
      'connected_at',
    ])
    .where('account_id', '=', accountId)
    .executeTakeFirst();
}

/** A new connection (a second consent replaces the first: one tasks account per meetings account). */
export async function saveConnection(
  db: Kysely<Database>,
  row: Pick<TaskConnectionsTable, 'account_id' | 'tasks_url' | 'client_id'> & Tokens,
) {
  await db
    .insertInto('task_connections')
    .values(row)
    .onConflict((oc) =>
      oc.column('account_id').doUpdateSet({
        tasks_url: row.tasks_url,
        client_id: row.client_id,
        access_token: row.access_token,
        refresh_token: row.refresh_token,
        access_expires_at: row.access_expires_at,
        changes_cursor: null,
        connected_at: sql<string>`now()`,
        updated_at: sql<string>`now()`,
      }),
    )
    .execute();
}

/** The tokens a refresh gave, in place of the old pair. */
export async function saveTokens(db: Kysely<Database>, accountId: string, tokens: Tokens) {
  await db
    .updateTable('task_connections')
    .set({ ...tokens, updated_at: sql<string>`now()` })
    .where('account_id', '=', accountId)
    .execute();
}

export async function deleteConnection(db: Kysely<Database>, accountId: string) {
  await db.deleteFrom('task_connections').where('account_id', '=', accountId).execute();
}
