import type { Kysely } from 'kysely';
import { sql } from 'kysely';

/**
 * `prune_items` and `close_changes` keep one plan per statement instead of planning it again on
 * every call. PL/pgSQL chose custom plans for their statements (the prune's victims and delete,
 * the tombstone purge): each create paid for planning them, 0.15 ms for the purge alone against
 * 0.07 ms to run it, about a quarter of a create's time in Postgres. The generic plans walk the
 * same indexes (items_prune_idx, items_pkey, changes_tombstones_idx) for any account, as the
 * prune test checks on an account that holds most of the table.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter function prune_items(uuid) set plan_cache_mode = force_generic_plan`.execute(db);
  await sql`alter function close_changes(uuid, bigint, integer) set plan_cache_mode = force_generic_plan`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter function prune_items(uuid) reset plan_cache_mode`.execute(db);
  await sql`alter function close_changes(uuid, bigint, integer) reset plan_cache_mode`.execute(db);
}
