import { randomUUID } from 'node:crypto';
import { expressCeiling, expressFloors } from './floor.js';
import { seedClipboardAccounts, seedClipboardData } from './seed/clipboard.js';
import { insertKeys } from './seed/keys.js';
import type { BaselineRoute } from './baseline.js';
import type { BenchContext, Scenario } from './types.js';
import { size } from './size.js';

/** How long the clipboard keeps tombstones (its TOMBSTONE_DAYS), passed to create_item as the service does. */
const TOMBSTONE_DAYS = 30;

/** Accounts of the spread create: one client each, as 50 people copying at once. */
const SPREAD_ACCOUNTS = size(50, 4);
/** Their history: full at the default limit, so each create also prunes one item. */
const SPREAD_ITEMS = size(1_000, 20);

export interface ClipboardFixture {
  accountId: string;
  auth: Record<string, string>;
  /** The key the admin command made (its scopes are copied to the bench's other keys). */
  keyId: string;
  spread: { accountIds: string[]; auth: string[] };
}

export async function seedClipboard(ctx: BenchContext): Promise<ClipboardFixture> {
  const [accountId] = await seedClipboardData(ctx.client);
  const key = await ctx.admin('clipboard', 'create-key', '--account', accountId!, '--name', 'bench');
  const accountIds = await seedClipboardAccounts(ctx.client, {
    label: 'bench-clipboard-spread',
    accounts: SPREAD_ACCOUNTS,
    items: SPREAD_ITEMS,
    snippets: 0,
    historyLimit: SPREAD_ITEMS,
  });
  const auth = await insertKeys(ctx.client, 'clipboard', accountIds, key.id);
  return {
    accountId: accountId!,
    auth: { authorization: `Bearer ${key.key}` },
    keyId: key.id,
    spread: { accountIds, auth },
  };
}

const ITEM_COLUMNS = 'id, type, content, source, favorite, created_at, updated_at';
const CONTENT = 'Copied from the quarterly report: revenue grew in every region';

/** A new text item each time: identical content would move the existing item instead. */
export const newClipboardItem = () =>
  JSON.stringify({ type: 'text', content: `${CONTENT} ${randomUUID()}`, source: 'api' });

/** The bare single-statement insert a create is compared with; `rotate` spreads it over accounts. */
function bareInsert(accountIds: string[]): Scenario['baseline'] {
  return {
    route: {
      schema: 'clipboard',
      statements: [
        {
          sql: `insert into items (id, account_id, type, content, source) values (gen_random_uuid(), $1, 'text', $2 || ' ' || gen_random_uuid(), 'api') returning ${ITEM_COLUMNS}`,
          params: [accountIds[0]!, CONTENT],
        },
      ],
      ...(accountIds.length > 1 ? { rotate: { 0: accountIds } } : {}),
    },
    does: 'runs one bare INSERT of the item (no dedup, prune, change log or transaction), the bare minimum of a create',
  };
}

/**
 * The product's own SQL for a create (the `create_item` function: dedup, insert, prune, change
 * log, the account's seq), in one transaction as the service runs it: what the feature costs,
 * without the service around it.
 */
function sameFunction(accountIds: string[]): NonNullable<Scenario['moreBaselines']>[number] & { route: BaselineRoute } {
  return {
    label: 'create_item()',
    route: {
      schema: 'clipboard',
      statements: [
        {
          // As the service calls it for a plain create: not sensitive, no key id, no dedupe key.
          sql: `select c.* from create_item($1, gen_random_uuid(), 'text', $2 || ' ' || gen_random_uuid(), 'api', ${TOMBSTONE_DAYS}, false, null, null) c`,
          params: [accountIds[0]!, CONTENT],
        },
      ],
      ...(accountIds.length > 1 ? { rotate: { 0: accountIds } } : {}),
    },
    does: "calls the product's own create_item() SQL function (dedup, insert, prune, change log), one statement in its own transaction",
  };
}

/**
 * The clipboard scenarios of the issue: a 100-item page, a create on one account (50
 * connections contending for its lock), a create spread over 50 accounts, a pull.
 */
export async function clipboardScenarios(_ctx: BenchContext, f: ClipboardFixture): Promise<Scenario[]> {
  let next = 0;
  const spreadBaseline = bareInsert(f.spread.accountIds);
  return [
    {
      name: 'clipboard list (limit=100)',
      service: 'clipboard',
      request: { path: '/api/clipboard?limit=100', headers: f.auth },
      baseline: { replay: true },
      moreBaselines: expressFloors({ replay: true }),
    },
    {
      name: 'clipboard create (one account)',
      service: 'clipboard',
      request: { method: 'POST', path: '/api/clipboard', headers: f.auth, setup: () => ({ body: newClipboardItem() }) },
      baseline: bareInsert([f.accountId]),
      moreBaselines: [sameFunction([f.accountId])],
    },
    {
      name: `clipboard create (${SPREAD_ACCOUNTS} accounts)`,
      service: 'clipboard',
      request: {
        method: 'POST',
        path: '/api/clipboard',
        setup: () => ({
          headers: { authorization: f.spread.auth[next++ % f.spread.auth.length]! },
          body: newClipboardItem(),
        }),
      },
      baseline: spreadBaseline,
      moreBaselines: [
        sameFunction(f.spread.accountIds),
        ...expressFloors(spreadBaseline),
        expressCeiling(sameFunction(f.spread.accountIds), 'create_item()'),
      ],
    },
    {
      name: 'clipboard pull (first page)',
      service: 'clipboard',
      request: { path: '/api/clipboard/pull?limit=100', headers: f.auth },
      baseline: { replay: true },
    },
  ];
}
