import { sql, type Kysely } from 'kysely';

/**
 * Expired Idempotency-Keys are swept a few at a time, oldest first, by the creates themselves
 * (`claimKey`), through this index. Before, each create deleted its account's expired keys with
 * a filter on `created_at` that walked every key the account made in the last day: a cost that
 * grew with the account's rate of creates.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index task_idempotency_keys_created_at_idx on task_idempotency_keys (created_at)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index task_idempotency_keys_created_at_idx`.execute(db);
}
