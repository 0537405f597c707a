import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import { pruneItemsV1 } from './2026_11_23_1300_shared_rules.js';

/**
 * `prune_items` without a scan of the whole items table. The first version asked for the items
 * past retention even when the account has none (cutoff -infinity), in one statement with the
 * history limit: planned for an account that holds most of the table, that branch became a
 * sequential scan of every item on each create (33 ms for a 100,000-item account). Now each rule
 * is its own statement, run only when it can delete something, and both walk items_prune_idx
 * (account, created_at, id) of the account's non-favorites from the oldest.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create or replace function prune_items(p_account uuid) returns uuid[] language plpgsql as $$
    declare
      v_excess integer;
      v_retention integer;
      v_victims uuid[] := '{}';
      v_pruned uuid[];
    begin
      select greatest(s.non_favorites - s.history_limit, 0), s.retention_days into v_excess, v_retention
        from account_state s where s.account_id = p_account;
      if v_excess > 0 then
        v_victims := array(select i.id from items i where i.account_id = p_account and not i.favorite
          order by i.created_at, i.id limit v_excess);
      end if;
      if v_retention > 0 then
        v_victims := v_victims || array(select i.id from items i where i.account_id = p_account and not i.favorite
          and i.created_at < now() - make_interval(days => v_retention) order by i.created_at, i.id);
      end if;
      if cardinality(v_victims) = 0 then
        return v_victims;
      end if;
      -- = any(array): the victims are usually one; a semi-join would plan a scan of the account.
      with deleted as (
        delete from items i where i.account_id = p_account and i.id = any(v_victims) returning i.id
      )
      select coalesce(array_agg(d.id), '{}') into v_pruned from deleted d;
      return v_pruned;
    end $$`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await pruneItemsV1.execute(db);
}
