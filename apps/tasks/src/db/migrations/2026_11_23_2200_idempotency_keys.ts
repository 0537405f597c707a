import { sql, type Kysely } from 'kysely';

/**
 * Idempotency-Keys of task creates, written in the create's own transaction, so a create answered
 * 201 is replayed for 24 hours even when Redis (the fast path) lost its record. One row per account
 * and key (the key's SHA-256); the first answer is kept as it was sent.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table task_idempotency_keys (
      account_id uuid not null,
      key_hash bytea not null,
      fingerprint text not null,
      task_id uuid,
      status smallint,
      response jsonb,
      created_at timestamptz not null default now(),
      primary key (account_id, key_hash)
    )`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table task_idempotency_keys`.execute(db);
}
