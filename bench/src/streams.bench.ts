import { readFileSync } from 'node:fs';
import pg from 'pg';
import { adminCommand, openEventStream, startProduct, type OpenedStream } from '@app/devstack';
import { insertKeys } from './seed/keys.js';
import { size } from './size.js';
import type { Stoppable } from './types.js';

const ACCOUNTS = 20;
const STREAMS_PER_ACCOUNT = 10;
const CHANGES = Number(process.env.BENCH_STREAM_CHANGES ?? size(1000, 20));
/** Streams held for the memory row, on the replicas' own ports (the gateway's connections are not the service's memory). */
const MEMORY_STREAMS = Number(process.env.BENCH_MEMORY_STREAMS ?? size(1000, 20));

export const STREAMS_LATENCY_SCENARIO = `streams latency (meetings, ${CHANGES.toLocaleString('en-US')} changes written on one replica, 200 streams through the gateway)`;
export const STREAMS_MEMORY_SCENARIO = 'streams memory (meetings, RSS per open stream)';

export interface StreamBenchResult {
  latency?: {
    changes: number;
    streams: number;
    deliveries: number;
    p50: number;
    p90: number;
    p99: number;
    max: number;
  };
  memory?: { streams: number; rssBeforeMb: number; rssAfterMb: number; perStreamKb: number };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export const percentile = (sorted: number[], p: number) =>
  sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

/** Resident set size of a process in kB (Linux /proc), 0 when it is gone. */
export function rssKb(pid: number | undefined): number {
  try {
    const match = pid ? /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8')) : null;
    return match ? Number(match[1]) : 0;
  } catch {
    return 0;
  }
}

/** Send -> arrival of every change event on `streams` whose person's name `sentAt` knows, in ms, sorted. */
export function eventLags(streams: OpenedStream[], sentAt: (name: string) => number | undefined): number[] {
  const lags: number[] = [];
  for (const stream of streams) {
    for (const b of stream.blocks) {
      if (b.event !== 'change') continue;
      const name = (JSON.parse(b.data!) as { item: { name?: string } }).item.name;
      const at = name === undefined ? undefined : sentAt(name);
      if (at !== undefined) lags.push(b.at - at);
    }
  }
  return lags.sort((a, b) => a - b);
}

/**
 * The stream rows, on a product of their own: two meetings replicas behind nginx, on the bench's
 * database and Redis. Latency: 200 streams (20 accounts x 10) held through the gateway (nginx
 * spreads them over both replicas), 1,000 person creates sent one at a time straight to the first
 * replica, each measured from just before its request was sent to its event's arrival on each of
 * its account's 10 streams. Memory: the replicas' RSS before and after MEMORY_STREAMS idle streams
 * (held on their own ports), divided by the streams.
 */
export async function streamBench(o: {
  databaseUrl: string;
  redisUrl: string;
  nginxDir: string;
  running: Set<Stoppable>;
  latency: boolean;
  memory: boolean;
}): Promise<StreamBenchResult> {
  const limits = '10000000';
  const product = await startProduct({
    databaseUrl: o.databaseUrl,
    redisUrl: o.redisUrl,
    nginxDir: o.nginxDir,
    replicas: 2,
    env: {
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      RATE_LIMIT_READS_PER_MINUTE: limits,
      RATE_LIMIT_WRITES_PER_MINUTE: limits,
      RATE_LIMIT_NETWORK_PER_MINUTE: limits,
      SHUTDOWN_TIMEOUT_MS: '2000',
    },
    serviceEnv: { meetings: { STREAMS_PER_ACCOUNT: String(MEMORY_STREAMS) } },
    gatewayVars: { MEETINGS_GUARD_RATE: '1000000r/s', MEETINGS_GUARD_BURST: 1000000 },
  });
  o.running.add(product);
  const client = new pg.Client({ connectionString: o.databaseUrl });
  await client.connect();
  const held: OpenedStream[] = [];
  try {
    const [writer, other] = product.instances.meetings;
    const first = await adminCommand(
      'meetings',
      o.databaseUrl,
      'create-account',
      '--email',
      `streams-bench-${Date.now()}@example.test`,
    );
    const template = await adminCommand(
      'meetings',
      o.databaseUrl,
      'create-key',
      '--account',
      first.accountId as string,
    );
    const { rows } = await client.query<{ id: string }>(
      `insert into meetings.accounts (email, timezone) select 'streams-bench-' || g || '-' || $1 || '@example.test', 'UTC' from generate_series(1, $2::int) g returning id`,
      [Date.now(), ACCOUNTS - 1],
    );
    const accounts = [first.accountId as string, ...rows.map((r) => r.id)];
    const auths = await insertKeys(client, 'meetings', accounts, template.id as string);
    const result: StreamBenchResult = {};

    if (o.memory) {
      const pids = [writer!.process.pid, other!.process.pid];
      const before = pids.reduce<number>((n, pid) => n + rssKb(pid), 0);
      for (let i = 0; i < MEMORY_STREAMS; i++) {
        const port = (i % 2 === 0 ? writer : other)!.port;
        held.push(
          await openEventStream(`http://127.0.0.1:${port}/api/changes/stream`, { Authorization: auths[i % ACCOUNTS]! }),
        );
      }
      if (held.some((s) => s.status !== 200))
        throw new Error(`a memory stream was refused: ${held.find((s) => s.status !== 200)!.status}`);
      await sleep(3000);
      const after = pids.reduce<number>((n, pid) => n + rssKb(pid), 0);
      result.memory = {
        streams: MEMORY_STREAMS,
        rssBeforeMb: before / 1024,
        rssAfterMb: after / 1024,
        perStreamKb: (after - before) / MEMORY_STREAMS,
      };
      for (const s of held.splice(0)) s.close();
      await sleep(1000);
    }

    if (o.latency) {
      const streams: Array<{ account: number; stream: OpenedStream }> = [];
      for (let i = 0; i < ACCOUNTS * STREAMS_PER_ACCOUNT; i++) {
        const stream = await openEventStream(`${product.gateway}/api/changes/stream`, {
          Authorization: auths[i % ACCOUNTS]!,
        });
        if (stream.status !== 200)
          throw new Error(`a stream was refused: ${stream.status} ${JSON.stringify(stream.body)}`);
        streams.push({ account: i % ACCOUNTS, stream });
        held.push(stream);
      }
      await sleep(1000);
      const sent = new Map<string, number>();
      for (let n = 0; n < CHANGES; n++) {
        const name = `B${n}`;
        sent.set(name, Date.now());
        const res = await fetch(`http://127.0.0.1:${writer!.port}/api/people`, {
          method: 'POST',
          headers: { authorization: auths[n % ACCOUNTS]!, 'content-type': 'application/json' },
          body: JSON.stringify({ name }),
        });
        if (res.status !== 201) throw new Error(`a write answered ${res.status}: ${await res.text()}`);
        await sleep(5);
      }
      // Every change on each of its account's streams.
      const expected = CHANGES * STREAMS_PER_ACCOUNT;
      const count = () =>
        streams.reduce(
          (n, s) => n + s.stream.blocks.filter((b) => b.event === 'change' && b.data?.includes('"name":"B')).length,
          0,
        );
      for (let i = 0; i < 300 && count() < expected; i++) await sleep(100);
      const lags = eventLags(
        streams.map((s) => s.stream),
        (name) => sent.get(name),
      );
      result.latency = {
        changes: CHANGES,
        streams: streams.length,
        deliveries: lags.length,
        p50: percentile(lags, 50),
        p90: percentile(lags, 90),
        p99: percentile(lags, 99),
        max: lags.at(-1) ?? 0,
      };
    }
    return result;
  } finally {
    for (const s of held) s.close();
    await client.end();
    await product.stop();
    o.running.delete(product);
  }
}
