import { sql, type Kysely } from 'kysely';

/**
 * The kept answer of an Idempotency-Key as `json`, which keeps its text as written, not `jsonb`,
 * which reorders object keys: a replay from Postgres (Redis lost its record) now sends the first
 * answer's bytes, not the same value with its fields in another order.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table task_idempotency_keys alter column response type json using response::json`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table task_idempotency_keys alter column response type jsonb using response::jsonb`.execute(db);
}
