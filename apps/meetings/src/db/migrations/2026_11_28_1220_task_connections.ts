import { sql, type Kysely } from 'kysely';

/**
 * An account's connection to a tasks account (DESIGN "Meetings: connected"): the OAuth tokens
 * meetings holds as tasks' client, sealed at rest (@app/auth/webhooks' sealValue), where tasks
 * was reached and which client id meetings named; and the authorization requests under way, by
 * the hash of their `state`, each with its PKCE verifier (used once, within 10 minutes).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table task_connections (
      account_id uuid primary key references accounts(id) on delete cascade,
      tasks_url text not null,
      client_id text not null,
      access_token text not null,
      refresh_token text not null,
      access_expires_at timestamptz not null,
      connected_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )`.execute(db);
  await sql`
    create table task_connection_starts (
      state_hash text primary key,
      account_id uuid not null references accounts(id) on delete cascade,
      tasks_url text not null,
      client_id text not null,
      redirect_uri text not null,
      verifier text not null,
      created_at timestamptz not null default now()
    )`.execute(db);
  await sql`create index task_connection_starts_account_idx on task_connection_starts (account_id, created_at)`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table task_connection_starts`.execute(db);
  await sql`drop table task_connections`.execute(db);
}
