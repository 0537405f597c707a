import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { runLoad, type LoadRequest, type LoadResult } from './load.js';
import { insertKeys } from './seed/keys.js';
import type { TasksFixture } from './tasks.bench.js';
import type { BenchContext } from './types.js';

export const WEBHOOKS_SCENARIO = 'tasks webhooks (create, one subscription per account)';

export interface WebhookBenchResult {
  without: LoadResult;
  with: LoadResult;
  /** with / without requests per second (target >= 0.9). */
  ratio: number;
  delivered: number;
  /** Commit (the event's timestamp) to arrival at the receiver, in ms. */
  lagP50: number;
  lagP99: number;
  lagMax: number;
}

/** A receiver that answers 204 at once and keeps each event's delivery lag. */
async function startReceiver(): Promise<{ url: string; lags: number[]; ids: Set<string>; close(): Promise<void> }> {
  const lags: number[] = [];
  const ids = new Set<string>();
  const server: Server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      const id = String(req.headers['webhook-id']);
      if (!ids.has(id)) {
        ids.add(id);
        lags.push(Date.now() - Date.parse((JSON.parse(body) as { timestamp: string }).timestamp));
      }
      res.statusCode = 204;
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    lags,
    ids,
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

const percentile = (sorted: number[], p: number) => (sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!);

/**
 * Task creates spread over the bench's accounts, first with no subscription, then with one
 * subscription per account whose receiver answers at once: the throughput the outbox costs and
 * how long an event takes from its commit to the receiver.
 */
export async function webhookBench(ctx: BenchContext, f: TasksFixture, opts: { connections: number; warmupSeconds: number; seconds: number }): Promise<WebhookBenchResult> {
  const { rows } = await ctx.client.query<{ id: string }>('select owner_account_id as id from tasks.workspaces where id = any($1::uuid[])', [f.workspaces]);
  const auths = await insertKeys(ctx.client, 'tasks', rows.map((r) => r.id), f.keyId);
  let next = 0;
  const request: LoadRequest = {
    method: 'POST',
    path: '/api/v1/tasks',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ title: 'Call the plumber', notes: 'About the kitchen sink', priority: 'low', tags: ['home'] }),
    setup: () => ({ headers: { 'content-type': 'application/json', authorization: auths[next++ % auths.length]! } }),
  };
  const without = await runLoad(ctx.gateway, request, opts);

  const receiver = await startReceiver();
  try {
    for (const authorization of auths) {
      const res = await fetch(`${ctx.gateway}/api/v1/webhooks`, {
        method: 'POST',
        headers: { authorization, 'content-type': 'application/json' },
        body: JSON.stringify({ url: receiver.url, events: ['task.created'] }),
      });
      if (res.status !== 201) throw new Error(`subscribing answered ${res.status}: ${await res.text()}`);
    }
    const withHooks = await runLoad(ctx.gateway, request, opts);
    // Every create of both load phases (warm-up too) is an event: wait until the receiver is idle.
    let seen = -1;
    for (let i = 0; i < 120 && seen !== receiver.ids.size; i++) {
      seen = receiver.ids.size;
      await new Promise((r) => setTimeout(r, 1000));
    }
    const sorted = [...receiver.lags].sort((a, b) => a - b);
    return {
      without,
      with: withHooks,
      ratio: withHooks.reqPerSec / Math.max(without.reqPerSec, 0.001),
      delivered: receiver.ids.size,
      lagP50: percentile(sorted, 50),
      lagP99: percentile(sorted, 99),
      lagMax: sorted.at(-1) ?? 0,
    };
  } finally {
    await receiver.close();
  }
}
