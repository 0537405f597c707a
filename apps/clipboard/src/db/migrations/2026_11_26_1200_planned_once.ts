import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import { pruneVictimsV1 } from './2026_11_24_0100_one_state_write.js';

const CREATE_ITEM = sql.raw('create_item(uuid, uuid, text, text, text, integer)');

/**
 * A create plans its statements once per connection instead of on every call, and no statistics
 * can make one of them read a whole account.
 * - PL/pgSQL had kept custom plans, made again on every call, for some of their statements (a
 *   constant `LIMIT 1` for the victims query alone saved 7%). Both functions now run with
 *   `plan_cache_mode = force_generic_plan`; the steady state's single victim is asked for with a
 *   constant `LIMIT 1`. The two queries whose best plan depends on their numbers (an excess above
 *   one after a lowered limit, retention) are planned for those numbers on each call (EXECUTE).
 * - With statistics taken before an account grew (to the planner it held an item or two), the
 *   dedup lookup, the victims query and the victims' DELETE each walked the account's whole
 *   items_list_idx: three reads of a 20,000-item account per create (the items test "when the
 *   statistics predate the account's growth"), 42-50 ms of Postgres per create at 100,000. Now
 *   `items.account_id` tells the planner an account holds about 1,000 items (n_distinct, applied
 *   by the next ANALYZE: one account per 1,000 rows, the default history limit), so the
 *   content-hash and ordered indexes win whatever ANALYZE last saw, and the DELETE goes by
 *   primary key alone.
 * Postgres time per create, calls straight to the function from 50 connections over 50 full
 * accounts, old and new in alternating rounds: 0.63-0.66 ms before, 0.50-0.61 ms after.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create or replace function prune_victims(p_account uuid, p_excess integer, p_retention_days integer) returns uuid[]
    language plpgsql set plan_cache_mode = force_generic_plan as $$
    declare
      v_victims uuid[] := '{}';
      v_past uuid[];
      v_pruned uuid[];
    begin
      if p_excess = 1 then
        v_victims := array(select i.id from items i where i.account_id = p_account and not i.favorite
          order by i.created_at, i.id limit 1);
      elsif p_excess > 1 then
        execute 'select array(select i.id from items i where i.account_id = $1 and not i.favorite
          order by i.created_at, i.id limit $2)' into v_victims using p_account, p_excess;
      end if;
      if p_retention_days > 0 then
        execute 'select array(select i.id from items i where i.account_id = $1 and not i.favorite
          and i.created_at < now() - make_interval(days => $2) order by i.created_at, i.id)' into v_past using p_account, p_retention_days;
        v_victims := v_victims || v_past;
      end if;
      if cardinality(v_victims) = 0 then
        return v_victims;
      end if;
      -- By primary key alone: the victims are this account's (read above under its lock), and
      -- with the account in the condition too, statistics that predate its growth made the plan
      -- walk one of the account's other indexes instead.
      with deleted as (
        delete from items i where i.id = any(v_victims) returning i.id
      )
      select coalesce(array_agg(d.id), '{}') into v_pruned from deleted d;
      return v_pruned;
    end $$`.execute(db);
  await sql`alter function ${CREATE_ITEM} set plan_cache_mode = force_generic_plan`.execute(db);
  await sql`alter table items alter column account_id set (n_distinct = -0.001)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table items alter column account_id reset (n_distinct)`.execute(db);
  await sql`alter function ${CREATE_ITEM} reset plan_cache_mode`.execute(db);
  await pruneVictimsV1(db);
}
