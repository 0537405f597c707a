import type { ColumnType, Generated, Kysely, Migration } from 'kysely';
import { sql } from 'kysely';

type Timestamp = ColumnType<string, string | undefined, string>;
/** A timestamp the database fills in. */
type CreatedAt = ColumnType<string, string | undefined, never>;

interface AccountsTable {
  id: Generated<string>;
  email: string;
  timezone: Generated<string>;
  /** argon2id (PHC string); null for an account made by the operator without one. */
  password_hash: string | null;
  created_at: CreatedAt;
}

interface ApiKeysTable {
  id: Generated<string>;
  account_id: string;
  name: string | null;
  key_prefix: string;
  key_hash: Buffer;
  scopes: string[];
  created_at: CreatedAt;
  revoked_at: Timestamp | null;
  last_used_at: Timestamp | null;
}

interface SessionsTable {
  id: Generated<string>;
  account_id: string;
  token_hash: Buffer;
  created_at: CreatedAt;
  expires_at: Timestamp;
  revoked_at: Timestamp | null;
}

interface OAuthClientsTable {
  id: string;
  name: string | null;
  redirect_uris: string[];
  /** The registration as the client sent it (RFC 7591 metadata), or its Client ID Metadata Document as fetched. */
  metadata: unknown;
  created_at: CreatedAt;
  /** A Client ID Metadata Document (its id is the document's URL): until when this copy may be used. Null for a registered client. */
  metadata_expires_at: Timestamp | null;
}

/**
 * One consent: an account let a client act with these scopes at this resource (the service's MCP
 * URL), until `expires_at`. Revoking it ends all its tokens.
 */
interface OAuthGrantsTable {
  id: Generated<string>;
  account_id: string;
  client_id: string;
  scopes: string[];
  /** Null only for grants made before every grant was bound to its resource. */
  resource: string | null;
  created_at: CreatedAt;
  expires_at: Timestamp;
  last_used_at: Timestamp | null;
  revoked_at: Timestamp | null;
}

/** A consent page shown and not yet answered; its id is the form's only field that matters. */
interface OAuthRequestsTable {
  id: Generated<string>;
  account_id: string;
  client_id: string;
  scopes: string[];
  redirect_uri: string;
  code_challenge: string;
  state: string | null;
  resource: string | null;
  expires_at: Timestamp;
}

interface OAuthCodesTable {
  code_hash: Buffer;
  account_id: string;
  client_id: string;
  scopes: string[];
  redirect_uri: string;
  code_challenge: string;
  resource: string | null;
  expires_at: Timestamp;
  used_at: Timestamp | null;
  /** The grant the code was exchanged for: a second use of the code ends it. */
  grant_id: string | null;
}

interface OAuthTokensTable {
  token_hash: Buffer;
  grant_id: string;
  kind: 'access' | 'refresh';
  scopes: string[];
  created_at: CreatedAt;
  expires_at: Timestamp;
  revoked_at: Timestamp | null;
  /** A rotated refresh token: the pair it was exchanged for, sealed with the token itself (see oauth/provider). */
  successor: Buffer | null;
}

/** The identity tables every service keeps in its own schema. */
export interface AuthDatabase {
  accounts: AccountsTable;
  api_keys: ApiKeysTable;
  sessions: SessionsTable;
  oauth_clients: OAuthClientsTable;
  oauth_grants: OAuthGrantsTable;
  oauth_requests: OAuthRequestsTable;
  oauth_codes: OAuthCodesTable;
  oauth_tokens: OAuthTokensTable;
}

/**
 * The identity tables, created in the schema the connection's search_path points at (each
 * service applies this to its own schema, so a key of one service is unknown to another).
 */
const authMigration: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema
      .createTable('accounts')
      .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
      .addColumn('email', 'text', (c) => c.notNull())
      .addColumn('timezone', 'text', (c) => c.notNull().defaultTo('UTC'))
      .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .execute();
    await sql`create unique index accounts_email_key on accounts (lower(email))`.execute(db);

    await db.schema
      .createTable('api_keys')
      .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
      .addColumn('account_id', 'uuid', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('name', 'text')
      .addColumn('key_prefix', 'text', (c) => c.notNull())
      .addColumn('key_hash', 'bytea', (c) => c.notNull().unique())
      .addColumn('scopes', sql`text[]`, (c) => c.notNull())
      .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .addColumn('revoked_at', 'timestamptz')
      .execute();
    await db.schema.createIndex('api_keys_account_idx').on('api_keys').columns(['account_id', 'created_at']).execute();

    await db.schema
      .createTable('sessions')
      .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
      .addColumn('account_id', 'uuid', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('token_hash', 'bytea', (c) => c.notNull().unique())
      .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
      .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
      .addColumn('revoked_at', 'timestamptz')
      .execute();
    await db.schema.createIndex('sessions_account_idx').on('sessions').column('account_id').execute();
  },
  async down(db: Kysely<any>): Promise<void> {
    await db.schema.dropTable('sessions').execute();
    await db.schema.dropTable('api_keys').execute();
    await db.schema.dropTable('accounts').execute();
  },
};

/** Sign-in: an optional password per account, and when each key was last used. */
const authPasswordsMigration: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema.alterTable('accounts').addColumn('password_hash', 'text').execute();
    await db.schema.alterTable('api_keys').addColumn('last_used_at', 'timestamptz').execute();
  },
  async down(db: Kysely<any>): Promise<void> {
    await db.schema.alterTable('api_keys').dropColumn('last_used_at').execute();
    await db.schema.alterTable('accounts').dropColumn('password_hash').execute();
  },
};

/** OAuth 2.1 for MCP connectors: registered clients, consents (grants), codes and tokens (hashed). */
const authOAuthMigration: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await sql`
      create table oauth_clients (
        id text primary key,
        name text,
        redirect_uris text[] not null,
        metadata jsonb not null,
        created_at timestamptz not null default now()
      );
      create table oauth_grants (
        id uuid primary key default gen_random_uuid(),
        account_id uuid not null references accounts (id) on delete cascade,
        client_id text not null references oauth_clients (id) on delete cascade,
        scopes text[] not null,
        resource text,
        created_at timestamptz not null default now(),
        last_used_at timestamptz,
        revoked_at timestamptz
      );
      create index oauth_grants_account_idx on oauth_grants (account_id, created_at) where revoked_at is null;
      create table oauth_requests (
        id uuid primary key default gen_random_uuid(),
        account_id uuid not null references accounts (id) on delete cascade,
        client_id text not null references oauth_clients (id) on delete cascade,
        scopes text[] not null,
        redirect_uri text not null,
        code_challenge text not null,
        state text,
        resource text,
        expires_at timestamptz not null
      );
      create table oauth_codes (
        code_hash bytea primary key,
        account_id uuid not null references accounts (id) on delete cascade,
        client_id text not null references oauth_clients (id) on delete cascade,
        scopes text[] not null,
        redirect_uri text not null,
        code_challenge text not null,
        resource text,
        expires_at timestamptz not null,
        used_at timestamptz,
        grant_id uuid references oauth_grants (id) on delete cascade
      );
      create table oauth_tokens (
        token_hash bytea primary key,
        grant_id uuid not null references oauth_grants (id) on delete cascade,
        kind text not null check (kind in ('access', 'refresh')),
        scopes text[] not null,
        created_at timestamptz not null default now(),
        expires_at timestamptz not null,
        revoked_at timestamptz
      );
      create index oauth_tokens_grant_idx on oauth_tokens (grant_id);
    `.execute(db);
  },
  async down(db: Kysely<any>): Promise<void> {
    await sql`drop table oauth_tokens; drop table oauth_codes; drop table oauth_requests; drop table oauth_grants; drop table oauth_clients`.execute(
      db,
    );
  },
};

/** A rotated refresh token keeps what it was exchanged for, so a second refresh within the grace window gets the same pair. */
const authRefreshGraceMigration: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await sql`alter table oauth_tokens add column successor bytea`.execute(db);
  },
  async down(db: Kysely<any>): Promise<void> {
    await sql`alter table oauth_tokens drop column successor`.execute(db);
  },
};

/**
 * A grant lives at most 90 days from consent (a refresh token no longer renews it for ever); grants
 * made before this get their 90 days from when they were made.
 */
const authGrantLifetimeMigration: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await sql`
      alter table oauth_grants add column expires_at timestamptz;
      update oauth_grants set expires_at = created_at + interval '90 days';
      alter table oauth_grants alter column expires_at set not null;
    `.execute(db);
  },
  async down(db: Kysely<any>): Promise<void> {
    await db.schema.alterTable('oauth_grants').dropColumn('expires_at').execute();
  },
};

/**
 * A client may identify itself by the URL of its Client ID Metadata Document: the fetched copy is
 * kept (grants, codes and consent requests name their client) with how long its caching headers
 * let it be used.
 */
const authClientDocumentsMigration: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await sql`alter table oauth_clients add column metadata_expires_at timestamptz`.execute(db);
  },
  async down(db: Kysely<any>): Promise<void> {
    await db.schema.alterTable('oauth_clients').dropColumn('metadata_expires_at').execute();
  },
};

/**
 * The identity migrations by name, to spread into a service's own set. Their names sort before
 * or after the service's own as they were added; the Migrator applies them in name order.
 */
export const authMigrations: Record<string, Migration> = {
  '2026_11_22_0900_auth': authMigration,
  '2026_11_23_0900_auth_passwords': authPasswordsMigration,
  '2026_11_23_2300_auth_oauth': authOAuthMigration,
  '2026_11_25_0600_auth_grant_lifetime': authGrantLifetimeMigration,
  '2026_11_25_0700_auth_refresh_grace': authRefreshGraceMigration,
  '2026_11_28_0900_auth_client_documents': authClientDocumentsMigration,
};
