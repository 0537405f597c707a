import { randomUUID } from 'node:crypto';
import { seedClipboardData } from './seed/clipboard.js';
import type { BenchContext, Scenario } from './types.js';

export interface ClipboardFixture {
  accountId: string;
  auth: Record<string, string>;
}

export async function seedClipboard(ctx: BenchContext): Promise<ClipboardFixture> {
  const [accountId] = await seedClipboardData(ctx.client);
  const key = await ctx.admin('clipboard', 'create-key', '--account', accountId!, '--name', 'bench');
  return { accountId: accountId!, auth: { authorization: `Bearer ${key.key}` } };
}

const ITEM_COLUMNS = 'id, type, content, source, favorite, created_at, updated_at';

/** The clipboard scenarios of the issue: a 100-item page, a create, a pull. */
export async function clipboardScenarios(_ctx: BenchContext, f: ClipboardFixture): Promise<Scenario[]> {
  const content = 'Copied from the quarterly report: revenue grew in every region';
  return [
    { name: 'clipboard list (limit=100)', service: 'clipboard', request: { path: '/api/clipboard?limit=100', headers: f.auth }, baseline: { replay: true } },
    {
      name: 'clipboard create',
      service: 'clipboard',
      request: {
        method: 'POST',
        path: '/api/clipboard',
        headers: f.auth,
        // New content each time: identical content would move the existing item instead.
        setup: () => ({ body: JSON.stringify({ type: 'text', content: `${content} ${randomUUID()}`, source: 'api' }) }),
      },
      baseline: {
        route: {
          schema: 'clipboard',
          statements: [{
            sql: `insert into items (id, account_id, type, content, source) values (gen_random_uuid(), $1, 'text', $2 || ' ' || gen_random_uuid(), 'api') returning ${ITEM_COLUMNS}`,
            params: [f.accountId, content],
          }],
        },
      },
    },
    { name: 'clipboard pull (first page)', service: 'clipboard', request: { path: '/api/clipboard/pull?limit=100', headers: f.auth }, baseline: { replay: true } },
  ];
}
