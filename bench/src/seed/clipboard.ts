import type pg from 'pg';
import { Progress } from '../progress.js';
import { poolWords, seedWordPool } from './word-pool.js';
import { size } from '../size.js';

const ACCOUNTS = 2;
const ITEMS_PER_ACCOUNT = size(100_000, 500);
const SNIPPETS_PER_ACCOUNT = size(200, 10);

export interface ClipboardSeed {
  /** Emails are `<label>-<n>@example.test`. */
  label: string;
  accounts: number;
  items: number;
  snippets: number;
  /** The history limit: equal to `items`, so every create prunes one item, as a full history does. */
  historyLimit: number;
}

/**
 * Clipboard accounts, each with an `items`-long history (2% of it favorites), snippets, and the
 * sync log's one change per entity, through INSERT ... SELECT over all accounts at once.
 */
export async function seedClipboardAccounts(client: pg.ClientBase, s: ClipboardSeed): Promise<string[]> {
  const progress = new Progress(`clipboard (${s.label})`, s.accounts * (s.items + s.snippets));
  await seedWordPool(client);
  // The service's triggers name its tables unqualified, as its own connections see them.
  await client.query('set search_path = clipboard, public');
  const { rows } = await client.query<{ id: string }>(
    `insert into clipboard.accounts (email) select $1 || '-' || n || '@example.test' from generate_series(0, $2::int - 1) n order by n returning id`,
    [s.label, s.accounts],
  );
  const accounts = rows.map((r) => r.id);
  await client.query(`insert into clipboard.account_state (account_id, history_limit) select unnest($1::uuid[]), $2`, [
    accounts,
    s.historyLimit,
  ]);
  const batch = Math.max(1, Math.floor(25_000 / s.items));
  for (let a = 0; a < accounts.length; a += batch) {
    const ids = accounts.slice(a, a + batch);
    for (let start = 0; start < s.items; start += 25_000) {
      const end = Math.min(s.items, start + 25_000);
      await client.query(
        `
        insert into clipboard.items (id, account_id, type, content, source, favorite, created_at, updated_at)
        select gen_random_uuid(), acc,
          (array['text', 'text', 'text', 'url', 'code', 'html'])[1 + n % 6],
          case when n % 6 = 3 then 'https://example.com/' || md5(acc::text || n::text)
            else ${poolWords(3, '3 + n % 60')} end,
          (array['desktop', 'mobile', 'browser', 'api'])[1 + n % 4],
          n % 50 = 0,
          now() - ($4::int - n) * interval '30 seconds',
          now() - ($4::int - n) * interval '30 seconds'
        from unnest($1::uuid[]) acc, generate_series($2::int, $3::int - 1) n`,
        [ids, start, end, s.items],
      );
      progress.tick(ids.length * (end - start));
    }
  }
  if (s.snippets > 0) {
    await client.query(
      `
      insert into clipboard.snippets (id, account_id, name, content, keyword)
      select gen_random_uuid(), acc, 'Snippet ' || n,
        ${poolWords(3, '10 + n % 40')},
        case when n % 2 = 0 then 'kw' || n end
      from unnest($1::uuid[]) acc, generate_series(1, $2::int) n`,
      [accounts, s.snippets],
    );
    progress.tick(accounts.length * s.snippets);
  }
  // The sync log: one change per entity, in creation order, as the service would have written.
  await client.query(
    `
    insert into clipboard.changes (account_id, seq, entity, entity_id, op, changed_at)
    select account_id, row_number() over (partition by account_id order by created_at, id), entity, id, 'upsert', created_at
    from (
      select account_id, 'item' as entity, id, created_at from clipboard.items where account_id = any($1::uuid[])
      union all select account_id, 'snippet', id, created_at from clipboard.snippets where account_id = any($1::uuid[])
    ) e`,
    [accounts],
  );
  await client.query(
    `
    update clipboard.account_state st set seq = c.max_seq
    from (select account_id, max(seq) as max_seq from clipboard.changes where account_id = any($1::uuid[]) group by account_id) c
    where st.account_id = c.account_id`,
    [accounts],
  );
  await client.query('reset search_path');
  progress.finish();
  return accounts;
}

/**
 * The two big accounts of the read and contended-write scenarios: a 100,000-item history (a
 * history limit that keeps it) and 200 snippets each.
 */
export function seedClipboardData(client: pg.ClientBase): Promise<string[]> {
  return seedClipboardAccounts(client, {
    label: 'bench-clipboard',
    accounts: ACCOUNTS,
    items: ITEMS_PER_ACCOUNT,
    snippets: SNIPPETS_PER_ACCOUNT,
    historyLimit: ITEMS_PER_ACCOUNT,
  });
}
