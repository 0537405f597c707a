import { sql, type Kysely, type Transaction } from 'kysely';
import type { AnyDb } from '../identity/repository.js';
import type { AuthDatabase } from '../identity/tables.js';

type Db = Kysely<AuthDatabase> | Transaction<AuthDatabase>;
const auth = (db: AnyDb) => db as Kysely<AuthDatabase>;

export interface ClientRecord {
  id: string;
  name: string | null;
  redirectUris: string[];
  metadata: Record<string, unknown>;
}

export async function insertClient(db: AnyDb, c: ClientRecord): Promise<void> {
  await auth(db)
    .insertInto('oauth_clients')
    .values({ id: c.id, name: c.name, redirect_uris: c.redirectUris, metadata: JSON.stringify(c.metadata) })
    .execute();
}

/**
 * Keeps the fetched copy of a Client ID Metadata Document (its URL is the client's id) for
 * `ttlSeconds` (0: fetched again next time); the row stays, since grants name their client.
 */
export async function saveDocumentClient(db: AnyDb, c: ClientRecord, ttlSeconds: number): Promise<void> {
  const fresh = {
    name: c.name,
    redirect_uris: c.redirectUris,
    metadata: JSON.stringify(c.metadata),
    metadata_expires_at: sql<string>`now() + make_interval(secs => ${ttlSeconds})`,
  };
  await auth(db)
    .insertInto('oauth_clients')
    .values({ id: c.id, ...fresh })
    .onConflict((oc) => oc.column('id').doUpdateSet(fresh))
    .execute();
}

/** A client by id; `fresh` says whether a metadata document's copy may still be used (null for a registered client). */
export async function findClient(
  db: AnyDb,
  id: string,
): Promise<(ClientRecord & { fresh: boolean | null }) | undefined> {
  return auth(db)
    .selectFrom('oauth_clients')
    .select([
      'id',
      'name',
      'redirect_uris as redirectUris',
      'metadata',
      sql<boolean | null>`metadata_expires_at > now()`.as('fresh'),
    ])
    .where('id', '=', id)
    .executeTakeFirst() as Promise<(ClientRecord & { fresh: boolean | null }) | undefined>;
}

/** A client that never got a grant is forgotten this long after it registered (or its document was first fetched). */
const UNUSED_CLIENT_HOURS = 24;

/**
 * Deletes up to `limit` clients older than {@link UNUSED_CLIENT_HOURS} that never got a grant and
 * have no consent or code in flight; answers how many went. A fetched document's client is
 * fetched again when next named.
 */
export async function forgetUnusedClients(db: AnyDb, limit = 1000): Promise<number> {
  const result = await sql<{ id: string }>`
    delete from oauth_clients where id in (
      select c.id from oauth_clients c
      where c.created_at < now() - make_interval(hours => ${UNUSED_CLIENT_HOURS})
        and not exists (select 1 from oauth_grants g where g.client_id = c.id)
        and not exists (select 1 from oauth_requests r where r.client_id = c.id)
        and not exists (select 1 from oauth_codes k where k.client_id = c.id)
      limit ${limit}
    )`.execute(auth(db));
  return Number(result.numAffectedRows ?? 0n);
}

export interface PendingRequest {
  id: string;
  clientId: string;
  scopes: string[];
  redirectUri: string;
  codeChallenge: string;
  state: string | null;
  resource: string | null;
}

/** A consent page about to be shown; it can be answered for ten minutes. */
export async function insertRequest(db: AnyDb, accountId: string, r: Omit<PendingRequest, 'id'>): Promise<string> {
  const row = await auth(db)
    .insertInto('oauth_requests')
    .values({
      account_id: accountId,
      client_id: r.clientId,
      scopes: r.scopes,
      redirect_uri: r.redirectUri,
      code_challenge: r.codeChallenge,
      state: r.state,
      resource: r.resource,
      expires_at: sql<string>`now() + interval '10 minutes'`,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** Takes (deletes) the account's unexpired pending request: each consent page is answered once. */
export async function takeRequest(db: AnyDb, id: string, accountId: string): Promise<PendingRequest | undefined> {
  await auth(db)
    .deleteFrom('oauth_requests')
    .where('expires_at', '<', sql<string>`now()`)
    .execute();
  return auth(db)
    .deleteFrom('oauth_requests')
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .returning([
      'id',
      'client_id as clientId',
      'scopes',
      'redirect_uri as redirectUri',
      'code_challenge as codeChallenge',
      'state',
      'resource',
    ])
    .executeTakeFirst();
}

export async function insertCode(db: AnyDb, hash: Buffer, accountId: string, r: PendingRequest): Promise<void> {
  await auth(db)
    .insertInto('oauth_codes')
    .values({
      code_hash: hash,
      account_id: accountId,
      client_id: r.clientId,
      scopes: r.scopes,
      redirect_uri: r.redirectUri,
      code_challenge: r.codeChallenge,
      resource: r.resource,
      expires_at: sql<string>`now() + interval '1 minute'`,
    })
    .execute();
}

export interface CodeRecord {
  accountId: string;
  clientId: string;
  scopes: string[];
  redirectUri: string;
  codeChallenge: string;
  resource: string | null;
  expired: boolean;
  usedAt: string | null;
  grantId: string | null;
}

export async function findCode(db: Db, hash: Buffer, forUpdate = false): Promise<CodeRecord | undefined> {
  let query = db
    .selectFrom('oauth_codes')
    .select([
      'account_id as accountId',
      'client_id as clientId',
      'scopes',
      'redirect_uri as redirectUri',
      'code_challenge as codeChallenge',
      'resource',
      sql<boolean>`expires_at <= now()`.as('expired'),
      'used_at as usedAt',
      'grant_id as grantId',
    ])
    .where('code_hash', '=', hash);
  if (forUpdate) query = query.forUpdate();
  return query.executeTakeFirst();
}

export async function markCodeUsed(db: Db, hash: Buffer, grantId: string): Promise<void> {
  await db
    .updateTable('oauth_codes')
    .set({ used_at: sql<string>`now()`, grant_id: grantId })
    .where('code_hash', '=', hash)
    .execute();
}

/** How long a consent lasts, whatever its refresh tokens do: the user connects the app again after it. */
export const GRANT_LIFETIME_DAYS = 90;

export async function insertGrant(
  db: Db,
  g: { accountId: string; clientId: string; scopes: string[]; resource: string | null },
): Promise<string> {
  const row = await db
    .insertInto('oauth_grants')
    .values({
      account_id: g.accountId,
      client_id: g.clientId,
      scopes: g.scopes,
      resource: g.resource,
      expires_at: sql<string>`now() + make_interval(days => ${GRANT_LIFETIME_DAYS})`,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

export async function insertToken(
  db: Db,
  t: { hash: Buffer; grantId: string; kind: 'access' | 'refresh'; scopes: string[]; ttlSeconds: number },
): Promise<void> {
  await db
    .insertInto('oauth_tokens')
    .values({
      token_hash: t.hash,
      grant_id: t.grantId,
      kind: t.kind,
      scopes: t.scopes,
      // No token outlives its grant.
      expires_at: sql<string>`least(now() + make_interval(secs => ${t.ttlSeconds}), (select expires_at from oauth_grants where id = ${t.grantId}))`,
    })
    .execute();
}

export interface TokenRecord {
  grantId: string;
  kind: 'access' | 'refresh';
  scopes: string[];
  clientId: string;
  accountId: string;
  resource: string | null;
  expired: boolean;
  revoked: boolean;
  grantRevoked: boolean;
  grantExpired: boolean;
  /** A rotated refresh token: the sealed pair it was exchanged for, and how long ago (seconds). */
  successor: Buffer | null;
  revokedSecondsAgo: number | null;
}

/** A token with its grant, whatever its state (the caller decides what a revoked one means). */
export async function findToken(db: Db, hash: Buffer, forUpdate = false): Promise<TokenRecord | undefined> {
  let query = db
    .selectFrom('oauth_tokens as t')
    .innerJoin('oauth_grants as g', 'g.id', 't.grant_id')
    .select([
      't.grant_id as grantId',
      't.kind',
      't.scopes',
      'g.client_id as clientId',
      'g.account_id as accountId',
      'g.resource',
      sql<boolean>`t.expires_at <= now()`.as('expired'),
      sql<boolean>`t.revoked_at is not null`.as('revoked'),
      sql<boolean>`g.revoked_at is not null`.as('grantRevoked'),
      sql<boolean>`g.expires_at <= now()`.as('grantExpired'),
      't.successor',
      sql<number | null>`extract(epoch from now() - t.revoked_at)::float8`.as('revokedSecondsAgo'),
    ])
    .where('t.token_hash', '=', hash);
  if (forUpdate) query = query.forUpdate();
  return query.executeTakeFirst();
}

export async function revokeToken(db: Db, hash: Buffer): Promise<void> {
  await db
    .updateTable('oauth_tokens')
    .set({ revoked_at: sql<string>`now()` })
    .where('token_hash', '=', hash)
    .where('revoked_at', 'is', null)
    .execute();
}

/** Spends a refresh token, keeping the sealed pair it was exchanged for. */
export async function rotateToken(db: Db, hash: Buffer, successor: Buffer): Promise<void> {
  await db
    .updateTable('oauth_tokens')
    .set({ revoked_at: sql<string>`now()`, successor })
    .where('token_hash', '=', hash)
    .where('revoked_at', 'is', null)
    .execute();
}

/** Ends a grant and every token it issued; false when the account has no such live grant. */
export async function revokeGrant(db: AnyDb, grantId: string, accountId?: string): Promise<boolean> {
  let query = auth(db)
    .updateTable('oauth_grants')
    .set({ revoked_at: sql<string>`now()` })
    .where('id', '=', grantId)
    .where('revoked_at', 'is', null);
  if (accountId !== undefined) query = query.where('account_id', '=', accountId);
  const result = await query.executeTakeFirst();
  let tokens = auth(db)
    .updateTable('oauth_tokens')
    .set({ revoked_at: sql<string>`now()` })
    .where('grant_id', '=', grantId)
    .where('revoked_at', 'is', null);
  // Scoped as the grant is: another account's grant id ends none of its tokens.
  if (accountId !== undefined) {
    tokens = tokens.where((eb) =>
      eb.exists(
        eb.selectFrom('oauth_grants').select('id').where('id', '=', grantId).where('account_id', '=', accountId),
      ),
    );
  }
  await tokens.execute();
  return result.numUpdatedRows > 0n;
}

export interface ConnectedApp {
  id: string;
  clientName: string;
  clientId: string;
  scopes: string[];
  createdAt: string;
  lastUsedAt: string | null;
}

/** The account's live grants, newest first: the "Connected apps" of the account page. */
export async function listGrants(db: AnyDb, accountId: string): Promise<ConnectedApp[]> {
  return auth(db)
    .selectFrom('oauth_grants as g')
    .innerJoin('oauth_clients as c', 'c.id', 'g.client_id')
    .select([
      'g.id',
      sql<string>`coalesce(c.name, c.id)`.as('clientName'),
      'c.id as clientId',
      'g.scopes',
      'g.created_at as createdAt',
      'g.last_used_at as lastUsedAt',
    ])
    .where('g.account_id', '=', accountId)
    .where('g.revoked_at', 'is', null)
    .orderBy('g.created_at', 'desc')
    .orderBy('g.id')
    .execute();
}
