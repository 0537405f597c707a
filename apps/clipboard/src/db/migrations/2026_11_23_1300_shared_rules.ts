import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import * as createItemV1 from './2026_11_23_0900_create_item.js';

/** The first `prune_items` (replaced by 2026_11_23_1500_prune_by_index; its down restores this). */
export const pruneItemsV1 = sql`
    create or replace function prune_items(p_account uuid) returns uuid[] language plpgsql as $$
    declare
      v_pruned uuid[];
    begin
      -- = any(array(...)): the victims are usually none or one, and the planner cannot know the
      -- limit in advance; a semi-join would plan a scan of every item of the account.
      with st as (
        select greatest(s.non_favorites - s.history_limit, 0) as excess,
          case when s.retention_days > 0 then now() - make_interval(days => s.retention_days) else '-infinity'::timestamptz end as cutoff
        from account_state s where s.account_id = p_account
      ),
      victims as (
        (select i.id from items i where i.account_id = p_account and not i.favorite
          order by i.created_at, i.id limit (select excess from st))
        union
        (select i.id from items i where i.account_id = p_account and not i.favorite
          and i.created_at < (select cutoff from st))
      ),
      deleted as (
        delete from items i where i.account_id = p_account and i.id = any(array(select v.id from victims v))
        returning i.id
      )
      select coalesce(array_agg(d.id), '{}') into v_pruned from deleted d;
      return v_pruned;
    end $$`;

/**
 * Two rules that `create_item` and the TypeScript account transaction each spelled out, now
 * one SQL function each, called from both:
 * - `prune_items(account)`: deletes the oldest non-favorites beyond the history limit and those
 *   past retention (both read from the account's state row), returns the deleted ids;
 * - `close_changes(account, seq, tombstone_days)`: drops the account's tombstones older than
 *   `tombstone_days`, stores its new seq and raises `min_retained_seq` past the dropped ones.
 * `create_item` is replaced by the same function calling them.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await pruneItemsV1.execute(db);

  await sql`
    create function close_changes(p_account uuid, p_seq bigint, p_tombstone_days integer) returns void language plpgsql as $$
    begin
      with purged as (
        delete from changes c
        where c.account_id = p_account and c.op = 'delete' and c.changed_at < now() - make_interval(days => p_tombstone_days)
        returning c.seq
      )
      update account_state st
        set seq = p_seq, min_retained_seq = greatest(st.min_retained_seq, coalesce((select max(p.seq) from purged p), 0))
        where st.account_id = p_account;
    end $$`.execute(db);

  await sql`
    create or replace function create_item(p_account uuid, p_id uuid, p_type text, p_content text, p_source text, p_tombstone_days integer)
    returns table (id uuid, type text, source text, favorite boolean, created_at timestamptz, updated_at timestamptz, created boolean)
    language plpgsql as $$
    #variable_conflict use_column
    declare
      v_seq bigint;
      v_same uuid;
      v_item items%rowtype;
      v_pruned uuid[];
    begin
      -- The lock without writing a row version (an upsert's DO UPDATE would write one); the row
      -- is created on the account's first write.
      select st.seq into v_seq from account_state st where st.account_id = p_account for update;
      if not found then
        insert into account_state (account_id) values (p_account) on conflict (account_id) do nothing;
        select st.seq into v_seq from account_state st where st.account_id = p_account for update;
      end if;

      -- Through the content-hash index.
      select i.id into v_same from items i
        where i.account_id = p_account and md5(i.content) = md5(p_content) and i.content = p_content and i.type = p_type
        limit 1;
      if v_same is null then
        -- Statement time, not transaction time, as every item write.
        insert into items as i (id, account_id, type, content, source, created_at, updated_at)
          values (p_id, p_account, p_type, p_content, p_source, clock_timestamp(), clock_timestamp())
          returning i.* into v_item;
      else
        update items i set source = p_source, created_at = clock_timestamp(), updated_at = clock_timestamp()
          where i.account_id = p_account and i.id = v_same
          returning i.* into v_item;
      end if;

      v_pruned := prune_items(p_account);

      -- The item's change first, then one tombstone per pruned item; an item pruned at once
      -- keeps only its tombstone. A later change of an entity replaces its earlier row.
      insert into changes (account_id, seq, entity, entity_id, op)
      select p_account, v_seq + 1, 'item', v_item.id, 'upsert' where not (v_item.id = any(v_pruned))
      union all
      select p_account, v_seq + 1 + o, 'item', d, 'delete' from unnest(v_pruned) with ordinality as t(d, o)
      on conflict (account_id, entity, entity_id) do update set seq = excluded.seq, op = excluded.op, changed_at = now();

      perform close_changes(p_account, v_seq + 1 + cardinality(v_pruned), p_tombstone_days);

      return query select v_item.id, v_item.type, v_item.source, v_item.favorite, v_item.created_at, v_item.updated_at, v_same is null;
    end $$`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop function create_item(uuid, uuid, text, text, text, integer)`.execute(db);
  await createItemV1.up(db);
  await sql`drop function close_changes(uuid, bigint, integer)`.execute(db);
  await sql`drop function prune_items(uuid)`.execute(db);
}
