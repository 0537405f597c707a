import type { ColumnType, Generated, Kysely, Migration } from 'kysely';
import { sql } from 'kysely';

type Timestamp = ColumnType<string, string | undefined, string>;
/** A timestamp the database fills in. */
type CreatedAt = ColumnType<string, string | undefined, never>;

export interface AccountsTable {
  id: Generated<string>;
  email: string;
  timezone: Generated<string>;
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
