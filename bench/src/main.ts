import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import {
  adminCommand,
  createDatabase,
  findExecutable,
  freePort,
  repoRoot,
  startEmbeddedPostgres,
  startProduct,
  startRedis,
  startNginx,
  startServiceProcess,
  stopChild,
  upstreams,
  waitForPort,
  type RunningProduct,
  type Service,
} from '@app/devstack';
import type { BaselineRoute } from './baseline.js';
import { runLoad, sendOnce, type LoadRequest, type LoadResult } from './load.js';
import { machine, printTable, writeResults, type Row } from './report.js';
import { peakRss } from './rss.js';
import { profiledRow } from './row-profile.js';
import { pidsNamed, postgresServing } from './cpu.js';
import { SqlLog, sequentialScans, statementMeter } from './sql-log.js';
import {
  TOTAL_TASKS,
  filterFigures,
  scaleRequests,
  seedTasksLarge,
  seedTasksSmall,
  taskScenarios,
  type TasksFixture,
} from './tasks.bench.js';
import { meetingScenarios, seedMeetings } from './meetings.bench.js';
import { clipboardScenarios, seedClipboard } from './clipboard.bench.js';
import { mixedScenario, seedFleet } from './mixed.bench.js';
import { seedWordPool } from './seed/word-pool.js';
import { WEBHOOKS_SCENARIO, webhookBench, type WebhookBenchResult } from './webhooks.bench.js';
import {
  STREAMS_LATENCY_SCENARIO,
  STREAMS_MEMORY_SCENARIO,
  streamBench,
  type StreamBenchResult,
} from './streams.bench.js';
import { C10K_SCENARIO, c10kBench, type C10kResult } from './c10k.bench.js';
import type { BenchContext, Scenario, Stoppable } from './types.js';
import { SMOKE, size } from './size.js';

const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? size(50, 4));
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? size(1, 0));
/**
 * The warm-up of a write scenario's load on the product (the floors keep WARMUP_SECONDS). A write
 * row follows read rows on the same service process, and its first seconds pay for what those
 * left behind: with a 1 s warm-up, the keyed create's service CPU after the tasks reads was 0.66 ms
 * a request, 0.57 ms with 3 s, as when it runs alone (BENCH_ONLY=tasks, one run each; docs/benchmarks.md).
 */
const WRITE_WARMUP_SECONDS = Number(process.env.BENCH_WRITE_WARMUP_SECONDS ?? size(3, 0));
const SECONDS = Number(process.env.BENCH_SECONDS ?? size(5, 1));
/**
 * The meetings network-level cap (180 a minute per address, in the service) and the gateway's
 * looser guard in front of it would answer most of the load.
 */
const NO_GUARD = { MEETINGS_GUARD_RATE: '1000000r/s', MEETINGS_GUARD_BURST: 1000000 };
/**
 * Where a floor behind the gateway is served: under a path the gateway routes to the service's
 * upstream (each upstream of the floor's gateway is the baseline process).
 */
const FLOOR_PATH: Partial<Record<Service, string>> = {
  tasks: '/api/v1/bench-floor',
  meetings: '/api/items/bench-floor',
  clipboard: '/api/clipboard/bench-floor',
};
/** Where the results go (BENCH_RESULTS: elsewhere, as the smoke run in `npm test` writes them). */
const RESULTS_FILE = process.env.BENCH_RESULTS ?? join(repoRoot, 'bench', 'results.json');
/** Rows from which a sequential scan of one of the big tables fails the run. */
const BIG_TABLE_ROWS = 10_000;
/**
 * BENCH_ONLY=clipboard,meetings get: run only the scenarios whose names contain one of these
 * (case-insensitive), seeding only the services they use; for short trial runs.
 */
const ONLY = (process.env.BENCH_ONLY ?? '')
  .split(',')
  .map((s) => s.trim().toLowerCase())
  .filter(Boolean);
const selected = (name: string) => ONLY.length === 0 || ONLY.some((o) => name.toLowerCase().includes(o));
/** Whether a service's data is needed: a term names it, or the mixed scenario (which uses all three) is selected, or a term names no service. */
const needs = (service: string) =>
  ONLY.length === 0 ||
  ONLY.some(
    (o) => o.includes(service) || 'mixed'.includes(o) || o.includes('mixed') || !/tasks|meetings|clipboard/.test(o),
  );

const benchStarted = Date.now();

function log(message: string): void {
  process.stderr.write(`[${Math.round((Date.now() - benchStarted) / 1000)}s] ${message}\n`);
}

/**
 * A baseline or floor that failed requests measured nothing (a statement that no longer fits the
 * schema answers 500s, fast or slow): the run stops, so the smoke run in `npm test` catches it.
 */
function answered(name: string, result: LoadResult): LoadResult {
  if (result.errors > 0)
    throw new Error(
      `${name}: the baseline answered ${result.errors} requests with an error (non-2xx, a socket error or a timeout)`,
    );
  return result;
}

/** The baseline process's path of a scenario's further baseline (one behind the gateway: a path it routes to the service). */
function moreBaselinePath(s: Scenario, i: number, j: number): string {
  const key = `/s${i}b${j}`;
  if (!s.moreBaselines?.[j]?.throughGateway) return key;
  if (s.service === 'all') throw new Error(`${s.name}: a floor behind the gateway needs one service`);
  const floor = FLOOR_PATH[s.service];
  if (floor === undefined) throw new Error(`${s.name}: no floor path of ${s.service} (FLOOR_PATH)`);
  return `${floor}${key}`;
}

function printStreams(r: StreamBenchResult & { c10k?: C10kResult }): void {
  if (r.latency) {
    const l = r.latency;
    process.stdout.write(
      `${STREAMS_LATENCY_SCENARIO}: ${l.deliveries} deliveries of ${l.changes} changes to ${l.streams} streams, request sent -> event received p50 ${l.p50} ms, p90 ${l.p90} ms, p99 ${l.p99} ms, max ${l.max} ms\n`,
    );
  }
  if (r.memory) {
    const m = r.memory;
    process.stdout.write(
      `${STREAMS_MEMORY_SCENARIO}: ${m.streams} idle streams over two replicas, RSS ${m.rssBeforeMb.toFixed(1)} -> ${m.rssAfterMb.toFixed(1)} MB, ${m.perStreamKb.toFixed(1)} KB per stream\n`,
    );
  }
  if (r.c10k) {
    const c = r.c10k;
    process.stdout.write(
      `${C10K_SCENARIO}: ${c.streams} streams, ${c.changes} changes, write -> event p50 ${c.p50} ms, p99 ${c.p99} ms, max ${c.max} ms, ${c.dropped} dropped, ${c.failedWrites} writes failed; ${c.perStreamKb.toFixed(1)} KB per idle stream (replica), ${c.gatewayPerConnKb.toFixed(1)} KB per connection (nginx workers)\n`,
    );
  }
}

/** What a run started: stopped, in reverse order, when it ends or is interrupted. */
interface Run {
  /** The run's temp directory (nginx configs, the baseline's routes). */
  work: string;
  cleanups: Array<() => Promise<void>>;
  /**
   * The products the stream rows start on their own, while they run: a scenario stops its own
   * when it ends, but an interrupted run ends in main's handler, not in the scenario.
   */
  running: Set<Stoppable>;
}

/** The product under measure and what it stands on. */
interface Stack {
  /** A superuser connection to the bench database. */
  client: pg.Client;
  databaseUrl: string;
  redisUrl: string;
  sqlLog: SqlLog;
  product: RunningProduct;
  /** Tasks' webhook worker, a process apart from its API process. */
  tasksWorker: ChildProcess;
  gateway: string;
  ctx: BenchContext;
}

type Streams = StreamBenchResult & { c10k?: C10kResult };
type LoadPair = { list: LoadResult; search: LoadResult };
/** The pids metered beside a scenario's own: every nginx process, and Postgres's serving backends. */
type SharedMeters = { nginx: () => number[]; postgres: () => number[] };

/**
 * A smoke run (`npm test`) caps every load at 100 requests a second: it checks that each row runs
 * and answers, not how fast, and uncapped loads made most of its CPU on CI's shared cores.
 */
const SMOKE_RATE = SMOKE ? { rate: 100 } : {};
/** Each scenario's load, and the webhook scenario's. */
const LOAD_OPTS = { connections: CONNECTIONS, warmupSeconds: WARMUP_SECONDS, seconds: SECONDS, ...SMOKE_RATE };

/**
 * BENCH_PROFILE=<dir>: the services and the baseline process preload the profiler, which the bench
 * starts and stops around each row's load (row-profile.ts; `node bench/dist/profile.js <dir>/<row>` sums a row's).
 */
const PROFILED: Record<string, string> = process.env.BENCH_PROFILE
  ? {
      BENCH_PROFILE: process.env.BENCH_PROFILE,
      NODE_OPTIONS: `--require ${join(repoRoot, 'bench', 'cpu-profile.cjs')}`,
    }
  : {};

/** Every service's settings under the bench. */
const SERVICE_VARS: Record<string, string> = {
  HOST: '127.0.0.1',
  // Request logs would go to this terminal; the services still build every log line's
  // fields, pino drops them at the level check.
  LOG_LEVEL: 'warn',
  RATE_LIMIT_PER_MINUTE: '10000000',
  RATE_LIMIT_READS_PER_MINUTE: '10000000',
  RATE_LIMIT_WRITES_PER_MINUTE: '10000000',
  RATE_LIMIT_NETWORK_PER_MINUTE: '10000000',
  DATABASE_POOL_SIZE: '20',
  // A smoke run shares CI's cores with the other suites: a pool wait past the 1.5 s default
  // would answer 503 and fail the run for a reason that is not the scenario's.
  ...(SMOKE ? { DATABASE_CONNECT_TIMEOUT_MS: '15000' } : {}),
  // As under npm start: the webhook scenario's receiver listens on 127.0.0.1.
  WEBHOOK_ALLOW_PRIVATE: '1',
  // A delivery slot for each of the scenario's 20 busy subscriptions (each sends in order).
  WEBHOOK_CONCURRENCY: '24',
  ...PROFILED,
};

/** Postgres (auto_explain preloaded, its data in `pgDir`), Redis, the three services, tasks' webhook worker and nginx. */
async function startStack(run: Run, pgDir: string): Promise<Stack> {
  log('starting Postgres (auto_explain preloaded), Redis, the three services and nginx...');
  const pgPort = await freePort();
  const adminUrl = `postgres://postgres:postgres@127.0.0.1:${pgPort}/postgres`;
  const sqlLog = new SqlLog(adminUrl);
  const postgres = await startEmbeddedPostgres({
    dataDir: pgDir,
    port: pgPort,
    persistent: false,
    settings: {
      ...SqlLog.settings,
      shared_buffers: '1GB',
      work_mem: '16MB',
      maintenance_work_mem: '512MB',
      max_wal_size: '8GB',
      checkpoint_timeout: '30min',
    },
    onLog: sqlLog.onLog,
  });
  run.cleanups.push(() => postgres.stop());
  const databaseUrl = await createDatabase(adminUrl, 'bench');
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  run.cleanups.push(() => client.end());
  await client.query(
    'create extension if not exists pg_trgm with schema public; create extension if not exists btree_gin with schema public',
  );
  const redis = await startRedis();
  run.cleanups.push(() => redis.stop());

  const product = await startProduct({
    databaseUrl,
    redisUrl: redis.url,
    nginxDir: join(run.work, 'nginx'),
    env: SERVICE_VARS,
    // Tasks as it is deployed (compose, k8s): the API process writes webhook events and a worker
    // process of its own delivers them, so the webhook scenario meters each apart.
    serviceEnv: { tasks: { SERVICE_ROLE: 'api' } },
    gatewayVars: NO_GUARD,
  });
  run.cleanups.push(() => product.stop());
  // Its webhook worker, which serves only its probes and metrics and delivers what the API process wrote.
  const { child: tasksWorker } = await startServiceProcess('tasks', 'tasks-worker', {
    ...SERVICE_VARS,
    DATABASE_URL: databaseUrl,
    REDIS_URL: redis.url,
    SERVICE_ROLE: 'worker',
  });
  run.cleanups.push(() => stopChild(tasksWorker));
  if (!product.gateway)
    throw new Error('nginx is not installed (apt-get install -y nginx-light): the bench measures through the gateway');
  const gateway = product.gateway;

  const ctx: BenchContext = {
    client,
    databaseUrl,
    gateway,
    admin: (service: Service, ...argv: string[]) => adminCommand(service, databaseUrl, ...argv),
    async getJson(path, headers) {
      const res = await fetch(`${gateway}${path}`, { headers });
      if (!res.ok) throw new Error(`GET ${path} answered ${res.status}: ${await res.text()}`);
      return res.json();
    },
  };
  return { client, databaseUrl, redisUrl: redis.url, sqlLog, product, tasksWorker, gateway, ctx };
}

/** The stream rows, on products of their own (BENCH_ONLY=streams runs them alone); null when none is selected. */
async function runStreamRows(run: Run, stack: Stack): Promise<Streams | null> {
  const streamRows = { latency: selected(STREAMS_LATENCY_SCENARIO), memory: selected(STREAMS_MEMORY_SCENARIO) };
  let streams: Streams | null = null;
  if (streamRows.latency || streamRows.memory) {
    log('streams: two meetings replicas, 200 streams through the gateway...');
    streams = await streamBench({
      databaseUrl: stack.databaseUrl,
      redisUrl: stack.redisUrl,
      nginxDir: join(run.work, 'nginx-streams'),
      running: run.running,
      ...streamRows,
    });
    printStreams(streams);
  }
  if (selected(C10K_SCENARIO)) {
    log(`${C10K_SCENARIO}...`);
    const c10k = await c10kBench({
      databaseUrl: stack.databaseUrl,
      redisUrl: stack.redisUrl,
      nginxDir: join(run.work, 'nginx-c10k'),
      running: run.running,
    });
    streams = { ...streams, c10k };
    printStreams({ c10k });
  }
  return streams;
}

/** Scale check: the task list and a rare-word search at 10,000 tasks, then at 1M; null when tasks is not selected. */
async function scaleCheck(
  ctx: BenchContext,
  tasks: TasksFixture,
): Promise<{ small: LoadPair; large: LoadPair } | null> {
  const scaleReq = scaleRequests(tasks);
  const scaleOpts = { connections: 4, warmupSeconds: size(2, 0), seconds: size(5, 1), ...SMOKE_RATE };
  if (!needs('tasks')) return null;
  log('scale check at 10k tasks...');
  const small = {
    list: await runLoad(ctx.gateway, scaleReq.list, scaleOpts),
    search: await runLoad(ctx.gateway, scaleReq.search, scaleOpts),
  };
  await seedTasksLarge(ctx, tasks);
  log('scale check at 1M tasks...');
  const large = {
    list: await runLoad(ctx.gateway, scaleReq.list, scaleOpts),
    search: await runLoad(ctx.gateway, scaleReq.search, scaleOpts),
  };
  return { small, large };
}

/** Seeds the other services' data (what the selection needs) and lists the selected scenarios. */
async function seedScenarios(ctx: BenchContext, tasks: TasksFixture): Promise<Scenario[]> {
  log('seeding meetings and clipboard side by side...');
  // Two schemas with nothing in common but the word pool (made first): each seed is one
  // connection's statements, Postgres-bound, so on two cores they take the time of the longer.
  await seedWordPool(ctx.client);
  const own = new pg.Client({ connectionString: ctx.databaseUrl });
  await own.connect();
  const [meetings, clipboard] = await Promise.all([
    needs('meetings') ? seedMeetings(ctx) : null,
    needs('clipboard') ? seedClipboard({ ...ctx, client: own }) : null,
  ]).finally(() => own.end());
  log('vacuum analyze (the whole database)...');
  await ctx.client.query('vacuum analyze');
  log("seeding the fleet (if mixed is selected), then the scenarios' own data...");
  const mixed =
    meetings && clipboard && selected('mixed')
      ? mixedScenario(await seedFleet(ctx, { tasks, meetings, clipboard }))
      : null;

  return [
    ...(needs('tasks') ? await taskScenarios(ctx, tasks) : []),
    ...(meetings ? await meetingScenarios(ctx, meetings) : []),
    ...(clipboard ? await clipboardScenarios(ctx, clipboard) : []),
    ...(mixed ? [mixed] : []),
  ].filter((s) => selected(s.name));
}

/**
 * One request of each scenario with statement logging and auto_explain on: the baseline
 * replays those statements, and every plan is printed and checked for sequential scans.
 */
async function captureScenarios(stack: Stack, scenarios: Scenario[]) {
  log('capturing the SQL and EXPLAIN ANALYZE of each scenario...');
  const routes: Record<string, BaselineRoute> = {};
  const explained: Array<{ scenario: string; plans: string[]; seqScans: string[] }> = [];
  // A sequential scan of a table that is small in this data set (the fleet's few thousand
  // snippets, say) is the planner's right call, not a missing index.
  const { rows: sizes } = await stack.client.query<{ name: string; rows: number }>(
    `select relname as name, max(reltuples)::float8 as rows from pg_class where relkind = 'r' group by relname`,
  );
  const bigEnough = new Set(sizes.filter((t) => t.rows >= BIG_TABLE_ROWS).map((t) => t.name));
  for (const [i, s] of scenarios.entries()) {
    const statuses: number[] = [];
    const captured = await stack.sqlLog.capture(
      async () => {
        for (const sample of s.samples ?? [s.request]) statuses.push(await sendOnce(stack.gateway, sample, {}));
      },
      s.service === 'all' ? undefined : s.service,
    );
    if (statuses.some((status) => status >= 400))
      throw new Error(`${s.name}: the product answered ${statuses.join(', ')} to the capture requests`);
    if (s.baseline && s.service !== 'all')
      routes[`/s${i}`] =
        'route' in s.baseline ? s.baseline.route : { schema: s.service, statements: captured.statements };
    for (const [j, more] of (s.moreBaselines ?? []).entries()) {
      routes[moreBaselinePath(s, i, j)] =
        'replayVia' in more.route
          ? { schema: s.service, statements: captured.statements, via: more.route.replayVia }
          : more.route;
    }
    const seqScans = [...new Set(captured.plans.flatMap(sequentialScans))].filter((table) => bigEnough.has(table));
    explained.push({ scenario: s.name, plans: captured.plans, seqScans });
  }
  return { routes, explained };
}

/** The baseline process serving `routes`, and the floors' own gateway in front of it. */
async function startFloors(
  run: Run,
  databaseUrl: string,
  routes: Record<string, BaselineRoute>,
): Promise<{ baselinePid: number | undefined; baselineUrl: string; floorUrl: string }> {
  const routesFile = join(run.work, 'baseline-routes.json');
  writeFileSync(routesFile, JSON.stringify(routes));
  const baselinePort = await freePort();
  const baseline = spawn(process.execPath, [join(__dirname, 'baseline.js'), routesFile, String(baselinePort)], {
    env: { ...process.env, DATABASE_URL: databaseUrl, DATABASE_POOL_SIZE: '20', ...PROFILED },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  run.cleanups.push(() => stopChild(baseline));
  await waitForPort(baselinePort);
  // The floors' own gateway: the product's template, every upstream the baseline process.
  const floorGateway = await startNginx(join(run.work, 'nginx-floor'), {
    GATEWAY_PORT: await freePort(),
    ...upstreams(() => `127.0.0.1:${baselinePort}`),
    ...NO_GUARD,
  });
  if (!floorGateway) throw new Error('nginx is not installed');
  run.cleanups.push(() => floorGateway.stop());
  return { baselinePid: baseline.pid, baselineUrl: `http://127.0.0.1:${baselinePort}`, floorUrl: floorGateway.url };
}

/**
 * Before each load of a write scenario (the product's and each baseline's): vacuum what the loads
 * before it left behind and write every dirty buffer out. Otherwise autovacuum of an earlier row's
 * rows, or a backend evicting another load's dirty pages from shared_buffers, runs inside this
 * load's window and is charged to whichever side happens to run then.
 */
async function settle(client: pg.Client): Promise<void> {
  const started = Date.now();
  await client.query('vacuum');
  await client.query('checkpoint');
  log(`  settled (vacuum, checkpoint) in ${Date.now() - started} ms`);
}

/** Each scenario's load on the product, then on each of its baselines: a row each. */
async function loadScenarios(
  stack: Stack,
  floors: Awaited<ReturnType<typeof startFloors>>,
  shared: SharedMeters,
  scenarios: Scenario[],
  routes: Record<string, BaselineRoute>,
): Promise<Row[]> {
  const { product, gateway } = stack;
  const rows: Row[] = [];
  const baselineOpts = { ...LOAD_OPTS, meter: { service: () => [floors.baselinePid], postgres: shared.postgres } };
  const baselineRequest = (s: Scenario, path: string): LoadRequest => ({
    method: s.request.method ?? 'GET',
    path,
    ...(s.request.body ? { body: s.request.body } : {}),
  });
  for (const [i, s] of scenarios.entries()) {
    log(`load: ${s.name}`);
    const pids = (s.service === 'all' ? Object.values(product.children) : [product.children[s.service]]).map(
      (c) => c.pid,
    );
    const writes = (s.request.method ?? 'GET') !== 'GET';
    const productOpts = {
      ...LOAD_OPTS,
      ...(writes ? { warmupSeconds: WRITE_WARMUP_SECONDS } : {}),
      meter: { service: () => pids, ...shared },
    };
    const settled = writes ? () => settle(stack.client) : async () => {};
    await settled();
    const statements = await statementMeter(stack.client);
    const { result: productResult, peakMb } = await peakRss(pids, () =>
      profiledRow(s.name, pids, () => runLoad(gateway, s.request, productOpts)),
    );
    if (statements) log(`${s.name}: Postgres time by statement\n${await statements(productResult.requests)}`);
    await settled();
    const baselineResult = routes[`/s${i}`]
      ? answered(
          s.name,
          await profiledRow(`${s.name} baseline`, [floors.baselinePid], () =>
            runLoad(floors.baselineUrl, baselineRequest(s, `/s${i}`), baselineOpts),
          ),
        )
      : null;
    const baselineDoes = !s.baseline
      ? ''
      : 'replay' in s.baseline
        ? 'replays the statements the product ran for one such request (captured from the database log)'
        : s.baseline.does;
    rows.push({ scenario: s.name, product: productResult, baseline: baselineResult, baselineDoes, rssMb: peakMb });
    for (const [j, more] of (s.moreBaselines ?? []).entries()) {
      const path = moreBaselinePath(s, i, j);
      await settled();
      const moreResult = answered(
        `${s.name} vs ${more.label}`,
        await profiledRow(`${s.name} vs ${more.label}`, [floors.baselinePid], () =>
          more.throughGateway
            ? runLoad(floors.floorUrl, baselineRequest(s, path), {
                ...baselineOpts,
                meter: { ...baselineOpts.meter, nginx: shared.nginx },
              })
            : runLoad(floors.baselineUrl, baselineRequest(s, path), baselineOpts),
        ),
      );
      rows.push({
        scenario: `${s.name} vs ${more.label}`,
        product: productResult,
        baseline: moreResult,
        baselineDoes: more.does,
        rssMb: peakMb,
      });
    }
  }
  return rows;
}

/** The webhook row: throughput and CPU with and without subscriptions, and the delivery lag. */
function printWebhooks(hooks: WebhookBenchResult): void {
  process.stdout.write(
    `${WEBHOOKS_SCENARIO}: ${hooks.without.reqPerSec.toFixed(0)} req/s without subscriptions -> ${hooks.with.reqPerSec.toFixed(0)} req/s with (${hooks.ratio.toFixed(2)}x; p99 ${hooks.without.p99.toFixed(1)} -> ${hooks.with.p99.toFixed(1)} ms); ` +
      `total CPU (API + worker + Postgres) per create ${hooks.createCpuMs.toFixed(3)} ms, per delivered event ${hooks.deliveryCpuMs.toFixed(3)} ms (${(hooks.deliveryCpuMs / Math.max(hooks.createCpuMs, 0.000001)).toFixed(2)}x, at ${hooks.sameRate.rate} creates/s; ` +
      `medians of runs with ${hooks.sameRate.totals.with.map((t) => t.toFixed(3)).join(', ')} ms and without ${hooks.sameRate.totals.without.map((t) => t.toFixed(3)).join(', ')} ms); ` +
      `a disabled subscription beside each enabled one adds ${hooks.disabledCpuMs.toFixed(3)} ms per create (${(hooks.disabledCpuMs / Math.max(hooks.createCpuMs, 0.000001)).toFixed(2)}x of a create; runs ${hooks.sameRate.totals.withDisabled.map((t) => t.toFixed(3)).join(', ')} ms); ` +
      `${hooks.delivered} events delivered, commit-to-receiver lag p50 ${hooks.lagP50} ms, p99 ${hooks.lagP99} ms, max ${hooks.lagMax} ms; ` +
      `CPU per create: API process ${hooks.without.cpuMsPerRequest.api!.toFixed(3)} -> ${hooks.with.cpuMsPerRequest.api!.toFixed(3)} ms (${hooks.apiCpuRatio.toFixed(2)}x), ` +
      `worker process ${hooks.without.cpuMsPerRequest.worker!.toFixed(3)} -> ${hooks.with.cpuMsPerRequest.worker!.toFixed(3)} ms, Postgres ${hooks.without.cpuMsPerRequest.postgres!.toFixed(3)} -> ${hooks.with.cpuMsPerRequest.postgres!.toFixed(3)} ms; ` +
      `at one rate, ${hooks.sameRate.rate} creates/s (${hooks.sameRate.without.reqPerSec.toFixed(0)} and ${hooks.sameRate.with.reqPerSec.toFixed(0)} reached): API process ${hooks.sameRate.without.cpuMsPerRequest.api!.toFixed(3)} -> ${hooks.sameRate.with.cpuMsPerRequest.api!.toFixed(3)} ms per create (${hooks.sameRate.apiCpuRatio.toFixed(2)}x); ` +
      `with the subscriptions and the worker stopped (events recorded, none sent): ${hooks.held.load.reqPerSec.toFixed(0)} req/s (${hooks.held.ratio.toFixed(2)}x), API process ${hooks.held.load.cpuMsPerRequest.api!.toFixed(3)} ms per create (${hooks.held.apiCpuRatio.toFixed(2)}x), Postgres ${hooks.held.load.cpuMsPerRequest.postgres!.toFixed(3)} ms (${hooks.held.postgresCpuRatio.toFixed(2)}x)\n`,
  );
}

/** Every plan, the table, the scale check, the webhook and stream rows, and the sequential-scan verdict. */
function printReport(r: {
  explained: Array<{ scenario: string; plans: string[] }>;
  table: string;
  scaleFigures: ReturnType<typeof scaleFiguresOf>;
  filter: ReturnType<typeof filterFigures>;
  hooks: WebhookBenchResult | null;
  streams: Streams | null;
  seqScanFailures: Array<{ scenario: string; seqScans: string[] }>;
}): void {
  process.stdout.write(
    '\nEXPLAIN (ANALYZE, BUFFERS) of every statement each scenario ran (captured with auto_explain):\n',
  );
  for (const e of r.explained) {
    process.stdout.write(`\n=== ${e.scenario}\n${e.plans.join('\n\n')}\n`);
  }
  process.stdout.write(`\n${r.table}\n\n`);
  if (r.filter) {
    const { filterP95Ms, viewAllP95Ms, ratio } = r.filter;
    process.stdout.write(
      `filter vs view=all (p95 through the gateway): ${filterP95Ms.toFixed(1)} ms against ${viewAllP95Ms.toFixed(1)} ms (${ratio.toFixed(2)}x; issue 58: at most 2x)\n`,
    );
  }
  if (r.scaleFigures) {
    const { listP95Ms: list, rareSearchP95Ms: search } = r.scaleFigures;
    process.stdout.write(
      `scale check (p95 through the gateway, 4 connections): list ${list.at10k.toFixed(1)} ms at 10k -> ${list.at1M.toFixed(1)} ms at 1M (${list.ratio.toFixed(2)}x); rare-word search ${search.at10k.toFixed(1)} ms -> ${search.at1M.toFixed(1)} ms (${search.ratio.toFixed(2)}x)\n`,
    );
  }
  if (r.hooks) printWebhooks(r.hooks);
  if (r.streams) printStreams(r.streams);
  if (r.seqScanFailures.length > 0) {
    process.stdout.write(
      `\nFAIL: sequential scans of big tables: ${r.seqScanFailures.map((e) => `${e.scenario} (${e.seqScans.join(', ')})`).join('; ')}\n`,
    );
  } else {
    process.stdout.write('\nno hot query scans a big table sequentially\n');
  }
}

/** The scale check's p95s at 10k and 1M tasks, and their ratios. */
function scaleFiguresOf(scale: { small: LoadPair; large: LoadPair } | null) {
  return (
    scale && {
      listP95Ms: {
        at10k: scale.small.list.p95,
        at1M: scale.large.list.p95,
        ratio: scale.large.list.p95 / Math.max(scale.small.list.p95, 0.001),
      },
      rareSearchP95Ms: {
        at10k: scale.small.search.p95,
        at1M: scale.large.search.p95,
        ratio: scale.large.search.p95 / Math.max(scale.small.search.p95, 0.001),
      },
    }
  );
}

/** Node's, Postgres's and nginx's versions, for the results file. */
async function versions(client: pg.Client): Promise<{ node: string; postgres: string; nginx: string }> {
  const pgVersion = (await client.query<{ v: string }>('select version() as v')).rows[0]!.v;
  const nginxBin = findExecutable('nginx');
  const nginxVersion = nginxBin ? spawnSync(nginxBin, ['-v'], { encoding: 'utf8' }).stderr.trim() : 'none';
  return { node: process.version, postgres: pgVersion, nginx: nginxVersion };
}

async function main(): Promise<number> {
  const started = Date.now();
  const run: Run = { work: mkdtempSync(join(tmpdir(), 'bench-')), cleanups: [], running: new Set() };
  // Its own temp directory: initdb runs as the postgres user, which cannot enter `work` (0700).
  const pgDir = mkdtempSync(join(tmpdir(), 'bench-pg-'));
  const cleanup = async () => {
    for (const product of run.running) await product.stop().catch(() => {});
    for (const fn of run.cleanups.reverse()) await fn().catch(() => {});
    rmSync(run.work, { recursive: true, force: true });
    rmSync(pgDir, { recursive: true, force: true });
  };
  // Ctrl-C, or a SIGTERM from whatever runs the bench: stop what it started, not leave it running.
  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const)
    process.on(signal, () => void cleanup().then(() => process.exit(code)));

  try {
    const stack = await startStack(run, pgDir);
    // The stream rows run on a product of their own (two replicas), before anything is seeded.
    const streams = await runStreamRows(run, stack);
    if (streams) {
      if (ONLY.length > 0 && ONLY.every((o) => 'streams'.includes(o) || o.includes('stream') || o.includes('c10k'))) {
        writeResults(RESULTS_FILE, {
          date: new Date().toISOString(),
          machine: machine(),
          settings: { only: ONLY },
          streams,
        });
        return 0;
      }
    }

    log('seeding the first 10,000 tasks...');
    const tasks = await seedTasksSmall(stack.ctx);
    const scale = await scaleCheck(stack.ctx, tasks);
    const scenarios = await seedScenarios(stack.ctx, tasks);
    const { routes, explained } = await captureScenarios(stack, scenarios);
    log("starting the baseline process and the floors' gateway...");
    const floors = await startFloors(run, stack.databaseUrl, routes);
    const {
      rows: [backend],
    } = await stack.client.query<{ pid: number }>('select pg_backend_pid() as pid');
    const shared: SharedMeters = { nginx: () => pidsNamed('nginx'), postgres: postgresServing(backend!.pid) };
    const rows = await loadScenarios(stack, floors, shared, scenarios, routes);

    const table = printTable(rows);
    // Last: it leaves a subscription on each account.
    log(`load: ${WEBHOOKS_SCENARIO}`);
    const hooks =
      needs('tasks') && selected(WEBHOOKS_SCENARIO)
        ? await webhookBench(stack.ctx, tasks, LOAD_OPTS, {
            api: stack.product.children.tasks.pid,
            worker: stack.tasksWorker.pid,
            postgres: shared.postgres,
          })
        : null;
    log('webhooks done; writing the report...');
    const scaleFigures = scaleFiguresOf(scale);
    const seqScanFailures = explained.filter((e) => e.seqScans.length > 0);
    const filter = filterFigures(rows);
    printReport({ explained, table, scaleFigures, filter, hooks, streams, seqScanFailures });

    const versionsNow = await versions(stack.client);
    writeResults(RESULTS_FILE, {
      date: new Date().toISOString(),
      durationSeconds: Math.round((Date.now() - started) / 1000),
      settings: {
        connections: CONNECTIONS,
        warmupSeconds: WARMUP_SECONDS,
        writeWarmupSeconds: WRITE_WARMUP_SECONDS,
        seconds: SECONDS,
        only: ONLY,
        tasks: TOTAL_TASKS,
        smoke: SMOKE,
      },
      machine: machine(),
      versions: versionsNow,
      scenarios: rows,
      scale: scaleFigures,
      filter,
      webhooks: hooks,
      streams,
      explain: explained.map((e) => ({ scenario: e.scenario, seqScans: e.seqScans, plans: e.plans })),
    });
    process.stdout.write(
      `results written to ${RESULTS_FILE} (${Math.round((Date.now() - started) / 1000)} s in all)\n`,
    );
    // A smoke run's tables are too small for the planner's choices to mean anything.
    return seqScanFailures.length > 0 && !SMOKE ? 1 : 0;
  } finally {
    await cleanup();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  },
);
