import { readFileSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import pg from 'pg';
import { adminCommand, openEventStream, startProduct, type OpenedStream } from '@app/devstack';
import { insertKeys } from './seed/keys.js';
import { size } from './size.js';
import { eventLags, percentile, rssKb, sleep } from './streams.bench.js';
import type { Stoppable } from './types.js';

const STREAMS = Number(process.env.BENCH_C10K_STREAMS ?? size(10_000, 50));
const ACCOUNTS = Math.max(1, Math.round(STREAMS / 5));
const CHANGES_PER_SECOND = 100;
const SECONDS = Number(process.env.BENCH_C10K_SECONDS ?? size(60, 2));
/** Streams being opened at once (the gateway and the replica accept them as fast as they can). */
const OPENING = 200;

export const C10K_SCENARIO = `streams.c10k (meetings, ${STREAMS.toLocaleString('en-US')} streams over ${ACCOUNTS.toLocaleString('en-US')} accounts through the gateway on one replica, ${CHANGES_PER_SECOND} changes/s for ${SECONDS} s)`;

export interface C10kResult {
  streams: number;
  changes: number;
  /** Write request sent -> event received on each of its account's streams, ms. */
  p50: number;
  p99: number;
  max: number;
  /** Streams that ended before the run did, or missed an event of their account. */
  dropped: number;
  /** Writes the replica did not answer 201 (on a loaded machine, a pool wait past its timeout): no event is expected of them. */
  failedWrites: number;
  /** The replica's RSS delta over the idle streams, per stream. */
  perStreamKb: number;
  /** The nginx workers' RSS delta per client connection (its upstream connection included). */
  gatewayPerConnKb: number;
}

/**
 * POSTs `body` to the replica's /api/people on `agent`'s kept-alive connections; resolves with
 * the status. node:http, not fetch: fetch cost the bench process several times more CPU per write,
 * on the machine it measures.
 */
function post(agent: Agent, port: number, auth: string, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ agent, host: '127.0.0.1', port, path: '/api/people', method: 'POST' }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0)).on('error', reject);
    });
    req.setHeader('authorization', auth);
    req.setHeader('content-type', 'application/json');
    req.on('error', reject).end(body);
  });
}

/** The nginx workers of the gateway whose prefix directory is `dir` (its master's children). */
function nginxWorkers(dir: string): number[] {
  const master = readFileSync(join(dir, 'nginx.pid'), 'utf8').trim();
  return readFileSync(`/proc/${master}/task/${master}/children`, 'utf8')
    .trim()
    .split(/\s+/)
    .filter(Boolean)
    .map(Number);
}

/**
 * Ten thousand open streams on one meetings replica, on a product of its own: STREAMS streams (five
 * per account) held through the gateway, the replica's and the nginx workers' RSS before and after
 * them (idle), then CHANGES_PER_SECOND person creates a second to random accounts for SECONDS,
 * sent straight to the replica, each measured from just before its request to its event's arrival
 * on each of its account's streams.
 */
export async function c10kBench(o: {
  databaseUrl: string;
  redisUrl: string;
  nginxDir: string;
  running: Set<Stoppable>;
}): Promise<C10kResult> {
  const limits = '10000000';
  const product = await startProduct({
    databaseUrl: o.databaseUrl,
    redisUrl: o.redisUrl,
    nginxDir: o.nginxDir,
    env: {
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      RATE_LIMIT_READS_PER_MINUTE: limits,
      RATE_LIMIT_WRITES_PER_MINUTE: limits,
      RATE_LIMIT_NETWORK_PER_MINUTE: limits,
      DATABASE_POOL_SIZE: '20',
      SHUTDOWN_TIMEOUT_MS: '2000',
    },
    gatewayVars: { MEETINGS_GUARD_RATE: '1000000r/s', MEETINGS_GUARD_BURST: 1000000 },
  });
  o.running.add(product);
  const client = new pg.Client({ connectionString: o.databaseUrl });
  await client.connect();
  const held: Array<{ account: number; stream: OpenedStream; endedAt?: number }> = [];
  try {
    const [replica] = product.instances.meetings;
    const first = await adminCommand(
      'meetings',
      o.databaseUrl,
      'create-account',
      '--email',
      `c10k-${Date.now()}@example.test`,
    );
    const template = await adminCommand(
      'meetings',
      o.databaseUrl,
      'create-key',
      '--account',
      first.accountId as string,
    );
    const { rows } = await client.query<{ id: string }>(
      `insert into meetings.accounts (email, timezone) select 'c10k-' || g || '-' || $1 || '@example.test', 'UTC' from generate_series(1, $2::int) g returning id`,
      [Date.now(), ACCOUNTS - 1],
    );
    const auths = await insertKeys(
      client,
      'meetings',
      [first.accountId as string, ...rows.map((r) => r.id)],
      template.id as string,
    );

    const pid = replica!.process.pid;
    const workers = nginxWorkers(o.nginxDir);
    const gatewayKb = () => workers.reduce((n, w) => n + rssKb(w), 0);
    const open = (n: number, from = 0) =>
      Promise.all(
        Array.from({ length: n }, (_, j) =>
          openEventStream(`${product.gateway}/api/changes/stream`, { Authorization: auths[(from + j) % ACCOUNTS]! }),
        ),
      );
    // The baseline is a process that has served streams: a fresh one grows its young generation
    // (up to 32 MB) and its pools with its first requests, whatever they are.
    for (const stream of await open(Math.min(OPENING, STREAMS))) stream.close();
    await sleep(2000);
    const before = { service: rssKb(pid), gateway: gatewayKb() };
    for (let i = 0; i < STREAMS; i += OPENING) {
      const opened = await open(Math.min(OPENING, STREAMS - i), i);
      for (const [j, stream] of opened.entries()) {
        if (stream.status !== 200)
          throw new Error(`stream ${i + j} was refused: ${stream.status} ${JSON.stringify(stream.body)}`);
        const entry: (typeof held)[number] = { account: (i + j) % ACCOUNTS, stream };
        void stream.ended.then((at) => (entry.endedAt = at));
        held.push(entry);
      }
    }
    await sleep(3000);
    const after = { service: rssKb(pid), gateway: gatewayKb() };
    process.stderr.write(
      `streams.c10k: ${held.length} streams open; writing ${CHANGES_PER_SECOND} changes/s for ${SECONDS} s...\n`,
    );

    const sent = new Map<string, { at: number; account: number; ok?: boolean }>();
    const writes: Array<Promise<void>> = [];
    const changes = CHANGES_PER_SECOND * SECONDS;
    const agent = new Agent({ keepAlive: true });
    const started = Date.now();
    for (let n = 0; n < changes; n++) {
      const wait = started + (n * 1000) / CHANGES_PER_SECOND - Date.now();
      if (wait > 0) await sleep(wait);
      const account = Math.floor(Math.random() * ACCOUNTS);
      const name = `C${n}`;
      const change = { at: Date.now(), account, ok: false };
      sent.set(name, change);
      writes.push(
        post(agent, replica!.port, auths[account]!, JSON.stringify({ name })).then(
          (status) => {
            change.ok = status === 201;
          },
          () => {},
        ),
      );
    }
    await Promise.all(writes);
    agent.destroy();
    // Every change on each of its account's streams (five), or ten seconds.
    const perAccount = new Array<number>(ACCOUNTS).fill(0);
    for (const { account, ok } of sent.values()) if (ok) perAccount[account]! += 1;
    const received = (s: OpenedStream) =>
      s.blocks.filter((b) => b.event === 'change' && b.data?.includes('"name":"C')).length;
    const missing = () => held.filter(({ account, stream }) => received(stream) < perAccount[account]!).length;
    for (let i = 0; i < 100 && missing() > 0; i++) await sleep(100);

    const lags = eventLags(
      held.map((h) => h.stream),
      (name) => sent.get(name)?.at,
    );
    if (process.env.BENCH_C10K_TRACE) {
      const arrivals = held.flatMap(({ stream }) =>
        stream.blocks.flatMap((b) => {
          const name = b.event === 'change' ? /"name":"(C\d+)"/.exec(b.data ?? '')?.[1] : undefined;
          const change = name === undefined ? undefined : sent.get(name);
          return change ? [[change.at, b.at - change.at]] : [];
        }),
      );
      writeFileSync(process.env.BENCH_C10K_TRACE, JSON.stringify(arrivals));
    }
    const dropped = held.filter((h) => h.endedAt !== undefined || received(h.stream) < perAccount[h.account]!).length;
    return {
      streams: held.length,
      changes,
      p50: percentile(lags, 50),
      p99: percentile(lags, 99),
      max: lags.at(-1) ?? 0,
      dropped,
      failedWrites: [...sent.values()].filter((c) => !c.ok).length,
      perStreamKb: (after.service - before.service) / held.length,
      gatewayPerConnKb: (after.gateway - before.gateway) / held.length,
    };
  } finally {
    for (const { stream } of held) stream.close();
    await client.end();
    await product.stop();
    o.running.delete(product);
  }
}
