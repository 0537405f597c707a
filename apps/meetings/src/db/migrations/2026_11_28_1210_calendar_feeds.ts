import { sql, type Kysely } from 'kysely';

/**
 * One secret calendar feed per account: only the SHA-256 of its token is kept (the address is
 * shown once), unique so a GET finds its account by one index probe.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table calendar_feeds (
      account_id uuid primary key references accounts(id) on delete cascade,
      token_hash text not null unique,
      created_at timestamptz not null default now()
    )`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table calendar_feeds`.execute(db);
}
