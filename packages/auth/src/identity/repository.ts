import { CompiledQuery, sql, type Kysely } from 'kysely';
import type { AuthDatabase } from './tables.js';

import type { AnyDb } from '../database/database.js';

export type { AnyDb };
const auth = (db: AnyDb) => db as Kysely<AuthDatabase>;

export interface IdentityRow {
  accountId: string;
  timezone: string;
  scopes: string[] | null;
  /** The key's, session's or (OAuth) grant's id. */
  credentialId: string;
  /** An OAuth access token's expiry, in seconds since the epoch. */
  expiresAt?: number;
  /** An OAuth access token's resource (the MCP URL it was issued for; null for grants made before binding). */
  resource?: string | null;
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

export async function insertAccount(
  db: AnyDb,
  email: string,
  timezone: string,
  passwordHash: string | null = null,
): Promise<{ id: string }> {
  return auth(db)
    .insertInto('accounts')
    .values({ email, timezone, password_hash: passwordHash })
    .returning('id')
    .executeTakeFirstOrThrow();
}

/** Whether an account uses this email (compared case-insensitively, as the unique index does). */
export async function emailTaken(db: AnyDb, email: string): Promise<boolean> {
  const row = await auth(db)
    .selectFrom('accounts')
    .select('id')
    .where((eb) => eb(eb.fn('lower', ['email']), '=', email.toLowerCase()))
    .executeTakeFirst();
  return row !== undefined;
}

export interface AccountRecord {
  id: string;
  email: string;
  timezone: string;
}

/** The account with this email (case-insensitive) and its password hash, for sign-in. */
export async function findAccountByEmail(
  db: AnyDb,
  email: string,
): Promise<(AccountRecord & { passwordHash: string | null }) | undefined> {
  return auth(db)
    .selectFrom('accounts')
    .select(['id', 'email', 'timezone', 'password_hash as passwordHash'])
    .where((eb) => eb(eb.fn('lower', ['email']), '=', email.toLowerCase()))
    .executeTakeFirst();
}

export async function findAccount(db: AnyDb, accountId: string): Promise<AccountRecord | undefined> {
  return auth(db)
    .selectFrom('accounts')
    .select(['id', 'email', 'timezone'])
    .where('id', '=', accountId)
    .executeTakeFirst();
}

export async function updateTimezone(
  db: AnyDb,
  accountId: string,
  timezone: string,
): Promise<AccountRecord | undefined> {
  return auth(db)
    .updateTable('accounts')
    .set({ timezone })
    .where('id', '=', accountId)
    .returning(['id', 'email', 'timezone'])
    .executeTakeFirst();
}

export async function setPasswordHash(db: AnyDb, accountId: string, passwordHash: string): Promise<void> {
  await auth(db).updateTable('accounts').set({ password_hash: passwordHash }).where('id', '=', accountId).execute();
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
  lastUsedAt: string | null;
}

const keyColumns = [
  'id',
  'name',
  'key_prefix as prefix',
  'scopes',
  'created_at as createdAt',
  'revoked_at as revokedAt',
  'last_used_at as lastUsedAt',
] as const;

export async function insertKey(
  db: AnyDb,
  values: { accountId: string; name: string | null; prefix: string; hash: Buffer; scopes: string[] },
): Promise<KeyRecord> {
  return auth(db)
    .insertInto('api_keys')
    .values({
      account_id: values.accountId,
      name: values.name,
      key_prefix: values.prefix,
      key_hash: values.hash,
      scopes: values.scopes,
    })
    .returning(keyColumns)
    .executeTakeFirstOrThrow();
}

export async function listKeys(db: AnyDb, accountId: string): Promise<KeyRecord[]> {
  return auth(db)
    .selectFrom('api_keys')
    .select(keyColumns)
    .where('account_id', '=', accountId)
    .orderBy('created_at', 'desc')
    .orderBy('id')
    .execute();
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
    .values({
      account_id: accountId,
      token_hash: hash,
      expires_at: sql<string>`now() + make_interval(secs => ${ttlSeconds})`,
    })
    .execute();
}

/** Revokes the live session with this hash; false when there was none. */
export async function revokeSessionByHash(db: AnyDb, hash: Buffer): Promise<boolean> {
  const result = await auth(db)
    .updateTable('sessions')
    .set({ revoked_at: sql<string>`now()` })
    .where('token_hash', '=', hash)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Revokes every live session of an account (after its password changes); returns how many. */
export async function revokeAccountSessions(db: AnyDb, accountId: string): Promise<number> {
  const result = await auth(db)
    .updateTable('sessions')
    .set({ revoked_at: sql<string>`now()` })
    .where('account_id', '=', accountId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** Deletes an account's authorization codes not yet exchanged (after its password changes): their exchange is then invalid_grant. */
export async function deletePendingCodes(db: AnyDb, accountId: string): Promise<void> {
  await auth(db).deleteFrom('oauth_codes').where('account_id', '=', accountId).where('used_at', 'is', null).execute();
}

/** Ends every live OAuth grant of an account and their tokens (after its password changes); returns how many. */
export async function revokeAccountGrants(db: AnyDb, accountId: string): Promise<number> {
  const grants = await auth(db)
    .updateTable('oauth_grants')
    .set({ revoked_at: sql<string>`now()` })
    .where('account_id', '=', accountId)
    .where('revoked_at', 'is', null)
    .returning('id')
    .execute();
  if (grants.length > 0) {
    await auth(db)
      .updateTable('oauth_tokens')
      .set({ revoked_at: sql<string>`now()` })
      .where(
        'grant_id',
        'in',
        grants.map((g) => g.id),
      )
      .where('revoked_at', 'is', null)
      .execute();
  }
  return grants.length;
}

/**
 * Records that a key (or a connected app's grant) was used, unless that was already recorded
 * within the last minute (the condition keeps replicas from rewriting the row on every request).
 */
export async function touchLastUsed(db: AnyDb, table: 'api_keys' | 'oauth_grants', id: string): Promise<void> {
  await auth(db)
    .updateTable(table)
    .set({ last_used_at: sql<string>`now()` })
    .where('id', '=', id)
    .where((eb) =>
      eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', sql<string>`now() - interval '1 minute'`)]),
    )
    .execute();
}

/** An OAuth access token's id: its stored hash in hex. */
const ACCESS_TOKEN_ID = /^[0-9a-f]{64}$/;

/**
 * Which of these credential ids (keys, sessions, OAuth grants, OAuth access tokens) are still
 * live: the check a held stream falls back on while revocation notifications cannot reach it.
 */
export async function liveCredentialIds(db: AnyDb, ids: string[]): Promise<Set<string>> {
  // OAuth access tokens are named by their hash in hex (see Caller.oauth.tokenId), the rest by uuid.
  const tokens = ids.filter((id) => ACCESS_TOKEN_ID.test(id));
  const { rows } = await db.executeQuery<{ id: string }>(
    CompiledQuery.raw(
      `select id::text from api_keys where id = any($1::uuid[]) and revoked_at is null
     union all select id::text from sessions where id = any($1::uuid[]) and revoked_at is null and expires_at > now()
     union all select id::text from oauth_grants where id = any($1::uuid[]) and revoked_at is null
     union all select encode(token_hash, 'hex') from oauth_tokens where token_hash = any($2::bytea[]) and revoked_at is null`,
      [ids.filter((id) => !ACCESS_TOKEN_ID.test(id)), tokens.map((id) => Buffer.from(id, 'hex'))],
    ),
  );
  return new Set(rows.map((r) => r.id));
}

// Run on every request made with an OAuth token (through the credential cache), so written once.
const FIND_ACCESS = `select g.id as "credentialId", g.account_id as "accountId", t.scopes, a.timezone,
    extract(epoch from t.expires_at)::float8 as "expiresAt", g.resource
  from oauth_tokens t join oauth_grants g on g.id = t.grant_id join accounts a on a.id = g.account_id
  where t.token_hash = $1 and t.kind = 'access' and t.revoked_at is null and t.expires_at > now()
    and g.revoked_at is null and g.expires_at > now()`;

/** The live access token with this hash, as a credential: its grant, account, scopes and resource. */
export async function findAccessToken(
  db: AnyDb,
  hash: Buffer,
): Promise<(IdentityRow & { expiresAt: number }) | undefined> {
  const { rows } = await db.executeQuery<IdentityRow & { expiresAt: number }>(CompiledQuery.raw(FIND_ACCESS, [hash]));
  return rows[0];
}
