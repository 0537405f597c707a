import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.js';

/**
 * Serializes, until the transaction ends, every write of one account that checks a per-account
 * limit on `resource`, so two concurrent creates cannot both pass the count.
 */
export async function lockAccountResource(trx: Kysely<Database>, accountId: string, resource: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`${accountId}:${resource}`}, 0))`.execute(trx);
}

/** The account's email and time zone, for GET /api/me. */
export async function findAccount(db: Kysely<Database>, accountId: string) {
  return db.selectFrom('accounts').select(['id', 'email', 'timezone']).where('id', '=', accountId).executeTakeFirst();
}
