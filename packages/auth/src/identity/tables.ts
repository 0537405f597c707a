import type { ColumnType, Generated, Kysely, Migration } from 'kysely';
import { sql } from 'kysely';

type Timestamp = ColumnType<string, string | undefined, string>;
/** A timestamp the database fills in. */
type CreatedAt = ColumnType<string, string | undefined, never>;

export interface AccountsTable {
  id: Generated<string>;
  email: string;
  timezone: Generated<string>;
  /** argon2id (PHC string); null for an account made by the operator without one. */
  password_hash: string | null;
  created_at: CreatedAt;
}

export interface ApiKeysTable {
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

export interface SessionsTable {
  id: Generated<string>;
  account_id: string;
  token_hash: Buffer;
  created_at: CreatedAt;
  expires_at: Timestamp;
  revoked_at: Timestamp | null;
}

/** The identity tables every service keeps in its own schema. */
export interface AuthDatabase {
  accounts: AccountsTable;
  api_keys: ApiKeysTable;
  sessions: SessionsTable;
}

/**
 * The identity tables, created in the schema the connection's search_path points at (each
 * service applies this to its own schema, so a key of one service is unknown to another).
 */
export const authMigration: Migration = {
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
export const authPasswordsMigration: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema.alterTable('accounts').addColumn('password_hash', 'text').execute();
    await db.schema.alterTable('api_keys').addColumn('last_used_at', 'timestamptz').execute();
  },
  async down(db: Kysely<any>): Promise<void> {
    await db.schema.alterTable('api_keys').dropColumn('last_used_at').execute();
    await db.schema.alterTable('accounts').dropColumn('password_hash').execute();
  },
};

/**
 * The identity migrations by name, to spread into a service's own set. Their names sort before
 * or after the service's own as they were added; the Migrator applies them in name order.
 */
export const authMigrations: Record<string, Migration> = {
  '2026_11_22_0900_auth': authMigration,
  '2026_11_23_0900_auth_passwords': authPasswordsMigration,
};
