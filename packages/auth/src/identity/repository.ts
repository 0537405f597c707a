import { CompiledQuery, sql, type Kysely } from 'kysely';
import type { AuthDatabase } from './tables.js';

/** Any service database: it holds the auth tables among its own. */
export type AnyDb = Kysely<any>;
const auth = (db: AnyDb) => db as Kysely<AuthDatabase>;

export interface IdentityRow {
  accountId: string;
  timezone: string;
  scopes: string[] | null;
  credentialId: string;
}

// Every request runs one of these two lookups: they are written out once instead of being
// rebuilt by the query builder each time.
const FIND_KEY = `select k.id as "credentialId", k.account_id as "accountId", k.scopes, a.timezone
  from api_keys k join accounts a on a.id = k.account_id
  where k.key_hash = $1 and k.revoked_at is null`;
const FIND_SESSION = `select s.id as "credentialId", s.account_id as "accountId", null as scopes, a.timezone
  from sessions s join accounts a on a.id = s.account_id
  where s.token_hash = $1 and s.revoked_at is null and s.expires_at > now()`;

/** The live (not revoked) key with this hash, with its account. */
export async function findKeyByHash(db: AnyDb, hash: Buffer): Promise<IdentityRow | undefined> {
  const { rows } = await db.executeQuery<IdentityRow>(CompiledQuery.raw(FIND_KEY, [hash]));
  return rows[0];
}

/** The live, unexpired session with this hash, with its account. */
export async function findSessionByHash(db: AnyDb, hash: Buffer): Promise<IdentityRow | undefined> {
  const { rows } = await db.executeQuery<IdentityRow>(CompiledQuery.raw(FIND_SESSION, [hash]));
  return rows[0];
}

export async function insertAccount(db: AnyDb, email: string, timezone: string): Promise<{ id: string }> {
  return auth(db).insertInto('accounts').values({ email, timezone }).returning('id').executeTakeFirstOrThrow();
}

export async function accountExists(db: AnyDb, accountId: string): Promise<boolean> {
  const row = await auth(db).selectFrom('accounts').select('id').where('id', '=', accountId).executeTakeFirst();
  return row !== undefined;
}

export interface KeyRecord {
  id: string;
  name: string | null;
  prefix: string;
  scopes: string[];
  createdAt: string;
  revokedAt: string | null;
}

const keyColumns = ['id', 'name', 'key_prefix as prefix', 'scopes', 'created_at as createdAt', 'revoked_at as revokedAt'] as const;

export async function insertKey(
  db: AnyDb,
  values: { accountId: string; name: string | null; prefix: string; hash: Buffer; scopes: string[] },
): Promise<KeyRecord> {
  return auth(db)
    .insertInto('api_keys')
    .values({ account_id: values.accountId, name: values.name, key_prefix: values.prefix, key_hash: values.hash, scopes: values.scopes })
    .returning(keyColumns)
    .executeTakeFirstOrThrow();
}

export async function listKeys(db: AnyDb, accountId: string): Promise<KeyRecord[]> {
  return auth(db).selectFrom('api_keys').select(keyColumns).where('account_id', '=', accountId).orderBy('created_at', 'desc').orderBy('id').execute();
}

/** Revokes a key (once; a revoked key stays revoked). Scoped to an account when one is given. */
export async function revokeKey(db: AnyDb, id: string, accountId?: string): Promise<KeyRecord | undefined> {
  let query = auth(db)
    .updateTable('api_keys')
    .set({ revoked_at: sql<string>`coalesce(revoked_at, now())` })
    .where('id', '=', id);
  if (accountId !== undefined) query = query.where('account_id', '=', accountId);
  return query.returning(keyColumns).executeTakeFirst();
}

export async function insertSession(db: AnyDb, accountId: string, hash: Buffer, ttlSeconds: number): Promise<void> {
  await auth(db)
    .insertInto('sessions')
    .values({ account_id: accountId, token_hash: hash, expires_at: sql<string>`now() + make_interval(secs => ${ttlSeconds})` })
    .execute();
}
