import type { Kysely } from 'kysely';
import { sql } from 'kysely';

/**
 * `close_changes` keeps one plan per statement instead of planning its tombstone purge again on
 * every call: PL/pgSQL chose a custom plan for it, so each create and sync batch paid 0.15 ms of
 * planning for a 0.07 ms purge. The purge reads changes_tombstones_idx for any account, so one
 * plan fits all.
 *
 * `prune_items` keeps custom plans: the generic plan of its victims query, made from table
 * statistics older than the account's growth, took ~9 ms per create on a 100,000-item account
 * (the bench's contended create fell from 0.81x to 0.17x of its baseline).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter function close_changes(uuid, bigint, integer) set plan_cache_mode = force_generic_plan`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter function close_changes(uuid, bigint, integer) reset plan_cache_mode`.execute(db);
}
