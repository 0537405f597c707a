import type pg from 'pg';
import { Progress } from '../progress.js';
import { VOCABULARY } from '../words.js';

export const ACCOUNTS = 2;
export const ITEMS_PER_ACCOUNT = 100_000;
export const SNIPPETS_PER_ACCOUNT = 200;

/**
 * Clipboard accounts, each with a 100,000-item history (a history limit that keeps it), 2% of it
 * favorites, 200 snippets, and the sync log's one change per entity, through INSERT ... SELECT.
 */
export async function seedClipboardData(client: pg.ClientBase): Promise<string[]> {
  const progress = new Progress('clipboard', ACCOUNTS * (ITEMS_PER_ACCOUNT + SNIPPETS_PER_ACCOUNT));
  const accounts: string[] = [];
  // The service's triggers name its tables unqualified, as its own connections see them.
  await client.query('set search_path = clipboard, public');
  for (let a = 0; a < ACCOUNTS; a++) {
    const { rows } = await client.query<{ id: string }>(`insert into clipboard.accounts (email) values ($1) returning id`, [`bench-clipboard-${a}@example.test`]);
    const accountId = rows[0]!.id;
    accounts.push(accountId);
    await client.query(`insert into clipboard.account_state (account_id, history_limit) values ($1, $2)`, [accountId, ITEMS_PER_ACCOUNT]);
    const batch = 25_000;
    for (let start = 0; start < ITEMS_PER_ACCOUNT; start += batch) {
      await client.query(`
        insert into clipboard.items (id, account_id, type, content, source, favorite, created_at, updated_at)
        select gen_random_uuid(), $2,
          (array['text', 'text', 'text', 'url', 'code', 'html'])[1 + n % 6],
          case when n % 6 = 3 then 'https://example.com/' || md5(n::text)
            else (select string_agg(($1::text[])[1 + floor(cardinality($1::text[]) * power(random(), 3))::int], ' ') from generate_series(1, 3 + n % 60)) end,
          (array['desktop', 'mobile', 'browser', 'api'])[1 + n % 4],
          n % 50 = 0,
          now() - ($5::int - n) * interval '30 seconds',
          now() - ($5::int - n) * interval '30 seconds'
        from generate_series($3::int, $4::int - 1) n`, [VOCABULARY, accountId, start, Math.min(ITEMS_PER_ACCOUNT, start + batch), ITEMS_PER_ACCOUNT]);
      progress.tick(Math.min(batch, ITEMS_PER_ACCOUNT - start));
    }
    await client.query(`
      insert into clipboard.snippets (id, account_id, name, content, keyword)
      select gen_random_uuid(), $2, 'Snippet ' || n,
        (select string_agg(($1::text[])[1 + floor(cardinality($1::text[]) * power(random(), 3))::int], ' ') from generate_series(1, 10 + n % 40)),
        case when n % 2 = 0 then 'kw' || n end
      from generate_series(1, $3::int) n`, [VOCABULARY, accountId, SNIPPETS_PER_ACCOUNT]);
    progress.tick(SNIPPETS_PER_ACCOUNT);
    // The sync log: one change per entity, in creation order, as the service would have written.
    await client.query(`
      insert into clipboard.changes (account_id, seq, entity, entity_id, op, changed_at)
      select $1, row_number() over (order by created_at, id), entity, id, 'upsert', created_at
      from (
        select 'item' as entity, id, created_at from clipboard.items where account_id = $1
        union all select 'snippet', id, created_at from clipboard.snippets where account_id = $1
      ) e`, [accountId]);
    await client.query(`update clipboard.account_state set seq = (select max(seq) from clipboard.changes where account_id = $1) where account_id = $1`, [accountId]);
  }
  await client.query('reset search_path');
  progress.finish();
  return accounts;
}
