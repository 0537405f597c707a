import { fork } from 'node:child_process';
import { join } from 'node:path';
import { runLoad, type LoadRequest, type LoadResult } from './load.js';
import { insertKeys } from './seed/keys.js';
import { size } from './size.js';
import type { TasksFixture } from './tasks.bench.js';
import type { BenchContext } from './types.js';

export const WEBHOOKS_SCENARIO = 'tasks webhooks (create, one subscription per account)';

/**
 * The fixed-rate runs with and without the subscriptions, taken in turn this many times each. One
 * pair of 10 s runs moved by up to 0.2 ms per create from one bench to the next at one commit
 * (a delivered event 0.49 to 0.73 ms): a process's CPU per request shifts between runs (the
 * API's by 25% with nothing changed), so one pair measured that shift as much as the delivery.
 */
const RATE_PAIRS = size(3, 1);

export interface WebhookBenchResult {
  without: LoadResult;
  with: LoadResult;
  /** with / without requests per second (target >= 0.9). */
  ratio: number;
  /** with / without CPU per create of the API process (target <= 1.1): delivery runs in the worker. */
  apiCpuRatio: number;
  /**
   * The API process's CPU per create with and without the subscriptions at one fixed request rate
   * (90% of the rate reached with them): a process answering fewer requests a second spends more
   * CPU on each (fewer requests share each wakeup and each write to a socket), so the ratio above
   * mixes what an event costs with what a lower rate costs; this one holds the rate still.
   * `with` and `without` are the median runs of RATE_PAIRS of each, taken in turn; `totals` each
   * run's total CPU per create (API + worker + Postgres), in run order.
   */
  sameRate: {
    rate: number;
    with: LoadResult;
    /** With a disabled subscription beside each enabled one (to the same event). */
    withDisabled: LoadResult;
    without: LoadResult;
    apiCpuRatio: number;
    totals: { with: number[]; withDisabled: number[]; without: number[] };
  };
  /**
   * The full-speed run with the subscriptions again, but with the worker process stopped
   * (SIGSTOP: nothing is delivered until it goes on): every create still records its event, so
   * this is what the API path costs with a subscription, apart from what delivery takes from the
   * cores the API shares with it on this machine. Its ratios are against the run without.
   */
  held: { load: LoadResult; ratio: number; apiCpuRatio: number; postgresCpuRatio: number };
  delivered: number;
  /** CPU ms of a create without subscriptions, API process + worker process + Postgres, at the fixed rate (the median run's). */
  createCpuMs: number;
  /**
   * CPU ms a delivered event adds, on the same three, at the same rate: a create's total with a
   * subscription less its total without, medians of the runs (the event row, the claim, the
   * signed send, the mark). Target <= 0.5 x createCpuMs.
   */
  deliveryCpuMs: number;
  /**
   * CPU ms a disabled subscription's event adds (recorded as skipped, kept for a replay, never
   * sent): the total with a disabled subscription beside each enabled one less the total with the
   * enabled ones alone, medians of the runs.
   */
  disabledCpuMs: number;
  /** Commit (the event's timestamp) to arrival at the receiver, in ms. */
  lagP50: number;
  lagP99: number;
  lagMax: number;
}

/** The event the scenario's creates emit, and one they never do (a subscription to it alone records nothing for them). */
const CREATED = 'task.created';
const OTHER_EVENT = 'task.deleted';

/** Subscribes the key's account to `event` at `url`; the subscription's id. */
async function subscribe(gateway: string, authorization: string, url: string, event: string): Promise<string> {
  const res = await fetch(`${gateway}/api/v1/webhooks`, {
    method: 'POST',
    headers: { authorization, 'content-type': 'application/json' },
    body: JSON.stringify({ url, events: [event] }),
  });
  if (res.status !== 201) throw new Error(`subscribing answered ${res.status}: ${await res.text()}`);
  return ((await res.json()) as { id: string }).id;
}

async function patchSubscription(
  gateway: string,
  { authorization, id }: { authorization: string; id: string },
  change: { enabled?: boolean; events?: string[] },
): Promise<void> {
  const res = await fetch(`${gateway}/api/v1/webhooks/${id}`, {
    method: 'PATCH',
    headers: { authorization, 'content-type': 'application/json' },
    body: JSON.stringify(change),
  });
  if (res.status !== 200)
    throw new Error(`PATCH ${JSON.stringify(change)} answered ${res.status}: ${await res.text()}`);
}

/** The receiver process (webhook-receiver.ts): its URL, and what it has received so far. */
async function startReceiver(): Promise<{
  url: string;
  stats(): Promise<{ delivered: number; lags: number[] }>;
  close(): void;
}> {
  const child = fork(join(__dirname, 'webhook-receiver.js'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('message', (m: { port: number }) => resolve(m.port));
    child.once('exit', () => reject(new Error('the webhook receiver exited')));
  });
  return {
    url: `http://127.0.0.1:${port}/hook`,
    stats: () =>
      new Promise((resolve) => {
        child.once('message', resolve);
        child.send('stats');
      }),
    close: () => child.kill(),
  };
}

/** Waits until the receiver has had nothing new for a second (at most two minutes); what it has had by then. */
async function idle(
  receiver: Awaited<ReturnType<typeof startReceiver>>,
): Promise<{ delivered: number; lags: number[] }> {
  let stats = await receiver.stats();
  for (let i = 0; i < 120; i++) {
    await new Promise((r) => setTimeout(r, 1000));
    const now = await receiver.stats();
    if (now.delivered === stats.delivered) break;
    stats = now;
  }
  return stats;
}

/** Runs `fn` with the process `pid` stopped (SIGSTOP), and lets it go on (SIGCONT) whatever happens. */
async function withWorkerStopped<T>(pid: number | undefined, fn: () => Promise<T>): Promise<T> {
  if (pid === undefined) throw new Error('the webhook worker process has no pid');
  process.kill(pid, 'SIGSTOP');
  try {
    return await fn();
  } finally {
    process.kill(pid, 'SIGCONT');
  }
}

/** CPU ms per request of the API process, the worker process and Postgres together. */
const totalCpuMs = (r: LoadResult) =>
  (r.cpuMsPerRequest.api ?? 0) + (r.cpuMsPerRequest.worker ?? 0) + (r.cpuMsPerRequest.postgres ?? 0);

/** The run whose total CPU per create is the median of `runs` (an odd number of them). */
const medianRun = (runs: LoadResult[]): LoadResult =>
  [...runs].sort((a, b) => totalCpuMs(a) - totalCpuMs(b))[(runs.length - 1) >> 1]!;

const percentile = (sorted: number[], p: number) =>
  sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

/**
 * Task creates spread over the bench's accounts, first with no subscription, then with one
 * subscription per account whose receiver answers at once: the throughput the outbox costs and
 * how long an event takes from its commit to the receiver. The API process and the worker process
 * (SERVICE_ROLE api and worker) are metered apart: CPU per create of each.
 */
export async function webhookBench(
  ctx: BenchContext,
  f: TasksFixture,
  load: { connections: number; warmupSeconds: number; seconds: number },
  pids: { api: number | undefined; worker: number | undefined; postgres: () => number[] },
): Promise<WebhookBenchResult> {
  const opts = { ...load, meter: { api: () => [pids.api], worker: () => [pids.worker], postgres: pids.postgres } };
  const { rows } = await ctx.client.query<{ id: string }>(
    'select owner_account_id as id from tasks.workspaces where id = any($1::uuid[])',
    [f.workspaces],
  );
  const auths = await insertKeys(
    ctx.client,
    'tasks',
    rows.map((r) => r.id),
    f.keyId,
  );
  let next = 0;
  const request: LoadRequest = {
    method: 'POST',
    path: '/api/v1/tasks',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      title: 'Call the plumber',
      notes: 'About the kitchen sink',
      priority: 'low',
      tags: ['home'],
    }),
    setup: () => ({ headers: { 'content-type': 'application/json', authorization: auths[next++ % auths.length]! } }),
  };
  const without = await runLoad(ctx.gateway, request, opts);

  const receiver = await startReceiver();
  try {
    const subscriptions: Array<{ authorization: string; id: string }> = [];
    for (const authorization of auths)
      subscriptions.push({ authorization, id: await subscribe(ctx.gateway, authorization, receiver.url, CREATED) });
    const withHooks = await runLoad(ctx.gateway, request, opts);
    // Every create of this load (warm-up too) is an event: the lag is of these, once all arrived.
    const stats = await idle(receiver);
    const sorted = [...stats.lags].sort((a, b) => a - b);
    // The same again with delivery held back: the worker is stopped until the run ends, then
    // sends what waited (the lags above are of the first run alone).
    const held = await withWorkerStopped(pids.worker, () => runLoad(ctx.gateway, request, opts));
    await idle(receiver);
    // Beside each subscription, a disabled one: it records each of its events as skipped (kept 7
    // days for a replay), so a disabled subscription is not the path of a create with none. Each
    // is switched by its event types instead: a subscription to `task.deleted` alone records
    // nothing for a create, and the create takes the path it takes with no subscription.
    const beside: typeof subscriptions = [];
    for (const { authorization } of subscriptions) {
      const id = await subscribe(ctx.gateway, authorization, receiver.url, OTHER_EVENT);
      await patchSubscription(ctx.gateway, { authorization, id }, { enabled: false });
      beside.push({ authorization, id });
    }
    const setEvents = async (subs: typeof subscriptions, event: string) => {
      for (const sub of subs) await patchSubscription(ctx.gateway, sub, { events: [event] });
    };
    const rate = Math.floor(withHooks.reqPerSec * 0.9);
    const runs: { with: LoadResult[]; withDisabled: LoadResult[]; without: LoadResult[] } = {
      with: [],
      withDisabled: [],
      without: [],
    };
    for (let i = 0; i < RATE_PAIRS; i++) {
      if (i > 0) await setEvents(subscriptions, CREATED);
      runs.with.push(await runLoad(ctx.gateway, request, { ...opts, rate }));
      await idle(receiver);
      await setEvents(beside, CREATED);
      runs.withDisabled.push(await runLoad(ctx.gateway, request, { ...opts, rate }));
      await idle(receiver);
      await setEvents([...subscriptions, ...beside], OTHER_EVENT);
      runs.without.push(await runLoad(ctx.gateway, request, { ...opts, rate }));
    }
    for (const { authorization, id } of [...subscriptions, ...beside]) {
      const res = await fetch(`${ctx.gateway}/api/v1/webhooks/${id}`, { method: 'DELETE', headers: { authorization } });
      if (res.status !== 204) throw new Error(`unsubscribing answered ${res.status}: ${await res.text()}`);
    }
    const withAtRate = medianRun(runs.with);
    const withDisabledAtRate = medianRun(runs.withDisabled);
    const withoutAtRate = medianRun(runs.without);
    return {
      sameRate: {
        rate,
        with: withAtRate,
        withDisabled: withDisabledAtRate,
        without: withoutAtRate,
        apiCpuRatio: withAtRate.cpuMsPerRequest.api! / Math.max(withoutAtRate.cpuMsPerRequest.api!, 0.000001),
        totals: {
          with: runs.with.map(totalCpuMs),
          withDisabled: runs.withDisabled.map(totalCpuMs),
          without: runs.without.map(totalCpuMs),
        },
      },
      disabledCpuMs: totalCpuMs(withDisabledAtRate) - totalCpuMs(withAtRate),
      without,
      with: withHooks,
      held: {
        load: held,
        ratio: held.reqPerSec / Math.max(without.reqPerSec, 0.001),
        apiCpuRatio: held.cpuMsPerRequest.api! / Math.max(without.cpuMsPerRequest.api!, 0.000001),
        postgresCpuRatio: held.cpuMsPerRequest.postgres! / Math.max(without.cpuMsPerRequest.postgres!, 0.000001),
      },
      ratio: withHooks.reqPerSec / Math.max(without.reqPerSec, 0.001),
      apiCpuRatio: withHooks.cpuMsPerRequest.api! / Math.max(without.cpuMsPerRequest.api!, 0.000001),
      delivered: stats.delivered,
      createCpuMs: totalCpuMs(withoutAtRate),
      deliveryCpuMs: totalCpuMs(withAtRate) - totalCpuMs(withoutAtRate),
      lagP50: percentile(sorted, 50),
      lagP99: percentile(sorted, 99),
      lagMax: sorted.at(-1) ?? 0,
    };
  } finally {
    receiver.close();
  }
}
