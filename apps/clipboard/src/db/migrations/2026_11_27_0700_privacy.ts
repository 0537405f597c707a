import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import { oneStateWriteCreateItem } from './2026_11_24_0100_one_state_write.js';

const CREATE_ITEM_V1 = sql.raw('create_item(uuid, uuid, text, text, text, integer)');

/**
 * Clipboard privacy (DESIGN.md "Clipboard privacy"):
 * - `items.sensitive` and `items.expires_at`: a sensitive item is deleted at `expires_at` by the
 *   worker's sweep (items_expiry_idx finds the due rows of every account);
 * - `items.key_id` and `items.dedupe_key` of sealed items (the content is the client's ciphertext);
 * - `account_state.sensitive_ttl_seconds` (default 60) and `seal_salt` (write-once);
 * - text search: a trigram GIN index on the lowered content of the items search may match (neither
 *   sensitive nor sealed), with the account first (btree_gin), so a search reads one account's matches.
 * `create_item` takes the three new inputs: a sensitive create merges only with a sensitive item of
 * the same content (and its time starts again), a sealed create with a `dedupeKey` merges with the
 * sealed item of the same key (taking the new ciphertext).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create extension if not exists pg_trgm with schema public`.execute(db);
  await sql`create extension if not exists btree_gin with schema public`.execute(db);
  await sql`
    alter table items
      add column sensitive boolean not null default false,
      add column expires_at timestamptz,
      add column key_id text,
      add column dedupe_key text`.execute(db);
  await sql`
    alter table account_state
      add column sensitive_ttl_seconds integer not null default 60,
      add column seal_salt text`.execute(db);
  await sql`create index items_expiry_idx on items (expires_at) where expires_at is not null`.execute(db);
  await sql`create index items_dedupe_idx on items (account_id, dedupe_key) where dedupe_key is not null`.execute(db);
  await sql`
    create index items_search_idx on items using gin (account_id, lower(content) public.gin_trgm_ops)
    where not sensitive and type <> 'sealed'`.execute(db);

  await sql`drop function ${CREATE_ITEM_V1}`.execute(db);
  await sql`
    create function create_item(p_account uuid, p_id uuid, p_type text, p_content text, p_source text, p_tombstone_days integer,
      p_sensitive boolean, p_key_id text, p_dedupe_key text)
    returns table (id uuid, type text, source text, favorite boolean, created_at timestamptz, updated_at timestamptz, created boolean,
      sensitive boolean, key_id text, dedupe_key text, expires_at timestamptz)
    language plpgsql set plan_cache_mode = force_generic_plan as $$
    #variable_conflict use_column
    declare
      v_state account_state%rowtype;
      v_same uuid;
      v_item items%rowtype;
      v_pruned uuid[];
      v_expires timestamptz;
      v_now timestamptz;
    begin
      select * into v_state from account_state st where st.account_id = p_account for update;
      if not found then
        insert into account_state (account_id) values (p_account) on conflict (account_id) do nothing;
        select * into v_state from account_state st where st.account_id = p_account for update;
      end if;
      perform set_config('clipboard.inline_count', 'on', true);
      -- One clock reading, taken under the account's lock (so times follow the order of creates),
      -- so a sensitive item's expiresAt is exactly its createdAt plus the TTL.
      v_now := clock_timestamp();
      v_expires := case when p_sensitive then v_now + make_interval(secs => v_state.sensitive_ttl_seconds) end;

      if p_dedupe_key is not null then
        select i.id into v_same from items i
          where i.account_id = p_account and i.dedupe_key = p_dedupe_key and i.type = p_type and i.sensitive = p_sensitive
          limit 1;
      else
        -- Through the content-hash index.
        select i.id into v_same from items i
          where i.account_id = p_account and md5(i.content) = md5(p_content) and i.content = p_content and i.type = p_type
            and i.sensitive = p_sensitive and i.dedupe_key is null
          limit 1;
      end if;
      if v_same is null then
        insert into items as i (id, account_id, type, content, source, sensitive, expires_at, key_id, dedupe_key, created_at, updated_at)
          values (p_id, p_account, p_type, p_content, p_source, p_sensitive, v_expires, p_key_id, p_dedupe_key, v_now, v_now)
          returning i.* into v_item;
        v_state.non_favorites := v_state.non_favorites + 1;
      else
        -- Moved to the top (a sealed item takes the new ciphertext; a sensitive one's time starts again).
        update items i set source = p_source, content = p_content, key_id = p_key_id, expires_at = v_expires,
            created_at = v_now, updated_at = v_now
          where i.account_id = p_account and i.id = v_same
          returning i.* into v_item;
      end if;

      v_pruned := prune_victims(p_account, greatest(v_state.non_favorites - v_state.history_limit, 0), v_state.retention_days);
      perform set_config('clipboard.inline_count', 'off', true);

      insert into changes (account_id, seq, entity, entity_id, op)
      select p_account, v_state.seq + 1, 'item', v_item.id, 'upsert' where not (v_item.id = any(v_pruned))
      union all
      select p_account, v_state.seq + 1 + o, 'item', d, 'delete' from unnest(v_pruned) with ordinality as t(d, o)
      on conflict (account_id, entity, entity_id) do update set seq = excluded.seq, op = excluded.op, changed_at = now();

      perform close_changes(p_account, v_state.seq + 1 + cardinality(v_pruned), p_tombstone_days, v_state.non_favorites - cardinality(v_pruned));

      return query select v_item.id, v_item.type, v_item.source, v_item.favorite, v_item.created_at, v_item.updated_at, v_same is null,
        v_item.sensitive, v_item.key_id, v_item.dedupe_key, v_item.expires_at;
    end $$`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop function create_item(uuid, uuid, text, text, text, integer, boolean, text, text)`.execute(db);
  await oneStateWriteCreateItem(db);
  await sql`alter function ${CREATE_ITEM_V1} set plan_cache_mode = force_generic_plan`.execute(db);
  await sql`drop index items_search_idx, items_dedupe_idx, items_expiry_idx`.execute(db);
  await sql`alter table account_state drop column sensitive_ttl_seconds, drop column seal_salt`.execute(db);
  await sql`alter table items drop column sensitive, drop column expires_at, drop column key_id, drop column dedupe_key`.execute(
    db,
  );
}
