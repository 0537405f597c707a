import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import * as genericPlans from './2026_11_23_1700_generic_plans.js';
import * as pruneByIndex from './2026_11_23_1500_prune_by_index.js';
import * as sharedRules from './2026_11_23_1300_shared_rules.js';

/**
 * A create writes the account's state row once instead of three times. `create_item` held the
 * row's lock, then the insert trigger, the prune's delete trigger and `close_changes` each
 * updated it: per create (bench data, `track_functions`), 826 us in Postgres, of which the two
 * counting triggers 150 us and `prune_items`' state read and call 320 us. Now `create_item` keeps
 * the count itself from the row it locked: it tells the triggers to stand aside for its own
 * statements (`clipboard.inline_count`, local to the transaction, off again before it returns),
 * prunes through `prune_victims` with the excess it knows, and stores seq, count and
 * `min_retained_seq` in `close_changes`' one UPDATE. Every other write still counts through the
 * triggers. Same results, same order of changes and tombstones.
 */
const counting = {
  items_count_insert: `update account_state s set non_favorites = s.non_favorites + n.c
      from (select account_id, count(*) as c from new_rows where not favorite group by account_id) n
      where s.account_id = n.account_id;`,
  items_count_delete: `update account_state s set non_favorites = s.non_favorites - o.c
      from (select account_id, count(*) as c from old_rows where not favorite group by account_id) o
      where s.account_id = o.account_id;`,
  items_count_update: `update account_state s set non_favorites = s.non_favorites + d.c
      from (
        select n.account_id, sum((not n.favorite)::int - (not o.favorite)::int) as c
        from new_rows n join old_rows o on o.id = n.id
        where n.favorite <> o.favorite
        group by n.account_id
      ) d
      where s.account_id = d.account_id;`,
};

/**
 * The prune itself, for a known excess: the oldest non-favorites beyond the limit, and those past
 * retention, both walking items_prune_idx; returns the deleted ids. Custom plans, as prune_items
 * had (see 2026_11_23_1700_generic_plans). Replaced by 2026_11_26_1200_planned_once, whose down
 * restores this.
 */
export async function pruneVictimsV1(db: Kysely<any>): Promise<void> {
  await sql`
    create or replace function prune_victims(p_account uuid, p_excess integer, p_retention_days integer) returns uuid[] language plpgsql as $$
    declare
      v_victims uuid[] := '{}';
      v_pruned uuid[];
    begin
      if p_excess > 0 then
        v_victims := array(select i.id from items i where i.account_id = p_account and not i.favorite
          order by i.created_at, i.id limit p_excess);
      end if;
      if p_retention_days > 0 then
        v_victims := v_victims || array(select i.id from items i where i.account_id = p_account and not i.favorite
          and i.created_at < now() - make_interval(days => p_retention_days) order by i.created_at, i.id);
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

async function countingTriggers(db: Kysely<any>, standAside: boolean): Promise<void> {
  const skip = standAside ? `if current_setting('clipboard.inline_count', true) = 'on' then return null; end if;` : '';
  for (const [name, update] of Object.entries(counting)) {
    await sql
      .raw(
        `create or replace function ${name}() returns trigger language plpgsql as $$
    begin
      ${skip}
      ${update}
      return null;
    end $$`,
      )
      .execute(db);
  }
}

/** This migration's `create_item` (2026_11_27_0700_privacy's down restores it). */
export async function oneStateWriteCreateItem(db: Kysely<any>): Promise<void> {
  await sql`
    create or replace function create_item(p_account uuid, p_id uuid, p_type text, p_content text, p_source text, p_tombstone_days integer)
    returns table (id uuid, type text, source text, favorite boolean, created_at timestamptz, updated_at timestamptz, created boolean)
    language plpgsql as $$
    #variable_conflict use_column
    declare
      v_state account_state%rowtype;
      v_same uuid;
      v_item items%rowtype;
      v_pruned uuid[];
    begin
      -- The lock without writing a row version (an upsert's DO UPDATE would write one); the row
      -- is created on the account's first write.
      select * into v_state from account_state st where st.account_id = p_account for update;
      if not found then
        insert into account_state (account_id) values (p_account) on conflict (account_id) do nothing;
        select * into v_state from account_state st where st.account_id = p_account for update;
      end if;
      -- This function counts its own inserts and deletes (the row is locked, so the count is exact).
      perform set_config('clipboard.inline_count', 'on', true);

      -- Through the content-hash index.
      select i.id into v_same from items i
        where i.account_id = p_account and md5(i.content) = md5(p_content) and i.content = p_content and i.type = p_type
        limit 1;
      if v_same is null then
        -- Statement time, not transaction time, as every item write. A new item is no favorite.
        insert into items as i (id, account_id, type, content, source, created_at, updated_at)
          values (p_id, p_account, p_type, p_content, p_source, clock_timestamp(), clock_timestamp())
          returning i.* into v_item;
        v_state.non_favorites := v_state.non_favorites + 1;
      else
        -- Moved to the top: its favorite flag, and so the count, is unchanged.
        update items i set source = p_source, created_at = clock_timestamp(), updated_at = clock_timestamp()
          where i.account_id = p_account and i.id = v_same
          returning i.* into v_item;
      end if;

      -- Every victim is a non-favorite.
      v_pruned := prune_victims(p_account, greatest(v_state.non_favorites - v_state.history_limit, 0), v_state.retention_days);
      perform set_config('clipboard.inline_count', 'off', true);

      -- The item's change first, then one tombstone per pruned item; an item pruned at once
      -- keeps only its tombstone. A later change of an entity replaces its earlier row.
      insert into changes (account_id, seq, entity, entity_id, op)
      select p_account, v_state.seq + 1, 'item', v_item.id, 'upsert' where not (v_item.id = any(v_pruned))
      union all
      select p_account, v_state.seq + 1 + o, 'item', d, 'delete' from unnest(v_pruned) with ordinality as t(d, o)
      on conflict (account_id, entity, entity_id) do update set seq = excluded.seq, op = excluded.op, changed_at = now();

      perform close_changes(p_account, v_state.seq + 1 + cardinality(v_pruned), p_tombstone_days, v_state.non_favorites - cardinality(v_pruned));

      return query select v_item.id, v_item.type, v_item.source, v_item.favorite, v_item.created_at, v_item.updated_at, v_same is null;
    end $$`.execute(db);
}

export async function up(db: Kysely<any>): Promise<void> {
  await countingTriggers(db, true);

  await pruneVictimsV1(db);

  await sql`
    create or replace function prune_items(p_account uuid) returns uuid[] language plpgsql as $$
    declare
      v_excess integer;
      v_retention integer;
    begin
      select greatest(s.non_favorites - s.history_limit, 0), s.retention_days into v_excess, v_retention
        from account_state s where s.account_id = p_account;
      return prune_victims(p_account, v_excess, v_retention);
    end $$`.execute(db);

  // One more, optional argument: the account's count of non-favorites, stored in the same UPDATE.
  await sql`drop function close_changes(uuid, bigint, integer)`.execute(db);
  await sql`
    create function close_changes(p_account uuid, p_seq bigint, p_tombstone_days integer, p_non_favorites integer default null) returns void
    language plpgsql set plan_cache_mode = force_generic_plan as $$
    begin
      with purged as (
        delete from changes c
        where c.account_id = p_account and c.op = 'delete' and c.changed_at < now() - make_interval(days => p_tombstone_days)
        returning c.seq
      )
      update account_state st
        set seq = p_seq,
          non_favorites = coalesce(p_non_favorites, st.non_favorites),
          min_retained_seq = greatest(st.min_retained_seq, coalesce((select max(p.seq) from purged p), 0))
        where st.account_id = p_account;
    end $$`.execute(db);

  await oneStateWriteCreateItem(db);
}

/** Back to the 2026_11_23 functions: three-argument close_changes, prune_items on its own, counting triggers always. */
export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop function close_changes(uuid, bigint, integer, integer)`.execute(db);
  await sharedRules.up(db);
  await pruneByIndex.up(db);
  await genericPlans.up(db);
  await sql`drop function prune_victims(uuid, integer, integer)`.execute(db);
  await countingTriggers(db, false);
}
