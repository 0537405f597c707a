import { LogLevel, Logger as WorkerLogger, run, type Runner, type Task } from 'graphile-worker';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { SCHEMA_CHANGE_LOCK, createDb, createPool } from '../database/database.js';
import { runAs } from './actor.js';
import type { EventCatalog } from './events.js';
import type { WebhookFilter } from './filter.js';
import * as repo from './repository.js';
import type { SecretKeys } from './secret-box.js';
import { resealSecrets } from './stored-secrets.js';
import { workerSchema } from './tables.js';
import { deliveryMetrics } from './metrics.js';
import { look, newScheduler, takeTurn, wakeTurns, type Scheduler } from './scheduler.js';

/** How often a process looks for new deliveries (the first try starts within this of the commit, and the job's start). */
const WAKE_MS = 100;

export interface WebhookWorkerOptions {
  service: string;
  databaseUrl: string;
  catalog: EventCatalog;
  retryBaseMs: number;
  allowPrivate: boolean;
  concurrency: number;
  /** Send receivers the delivery's W3C `traceparent` (WEBHOOK_TRACE_CONTEXT=1). */
  traceContext: boolean;
  /** WEBHOOK_SECRET_KEY and the old keys: what opens the stored signing secrets. */
  secretKeys: SecretKeys;
  logger: Logger;
  registry: Registry;
  /** The service's own jobs on the same queue (tasks: reminders and due times), and what its start queues that its triggers missed. */
  queue?: ServiceQueue | undefined;
  /** The service's filter of events, for subscriptions with a `filter`. */
  filter?: WebhookFilter | undefined;
}

/** A service's jobs on the worker's graphile-worker queue: each task by name, and a catch-up run once the queue is installed. */
export interface ServiceQueue {
  tasks: Record<string, (payload: unknown) => Promise<void>>;
  catchUp?: () => Promise<void>;
}

export interface WebhookWorker {
  start(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The queue's side of the worker: the graphile-worker runner and its pool, the wake-up loop's
 * timer, and what is warned or done once per process. The sending itself is the scheduler's.
 */
interface Queue {
  o: WebhookWorkerOptions;
  log: Logger;
  schema: string;
  scheduler: Scheduler;
  webhookTask: Task;
  runner: Runner | undefined;
  queuePool: ReturnType<typeof createPool> | undefined;
  tickTimer: NodeJS.Timeout | undefined;
  lastWarning: number;
  lastWorkerLog: number;
  sealed: boolean;
}

/**
 * The delivery worker: graphile-worker (in `<schema>_worker`) runs one `webhook` job per
 * subscription with something to send. A job holds the subscription's advisory lock (on its own
 * connection, so a killed process lets go at once) and sends its pending deliveries in commit
 * order, one at a time, retrying the head with backoff before anything behind it: across
 * processes and replicas no event is ever sent twice at once, and none overtakes another.
 */
export function createWebhookWorker(o: WebhookWorkerOptions): WebhookWorker {
  const log = o.logger.child({ component: 'webhooks' });
  const count = deliveryMetrics(o.registry, () => scheduler.db);
  const scheduler = newScheduler(
    {
      service: o.service,
      secretKeys: o.secretKeys,
      allowPrivate: o.allowPrivate,
      traceContext: o.traceContext,
      retryBaseMs: o.retryBaseMs,
      log,
      count,
    },
    o.catalog,
    o.concurrency,
    o.filter,
  );
  const q: Queue = {
    o,
    log,
    schema: workerSchema(o.service),
    scheduler,
    runner: undefined,
    queuePool: undefined,
    tickTimer: undefined,
    lastWarning: 0,
    lastWorkerLog: 0,
    sealed: false,
    webhookTask: async (payload) => {
      const subscriptionId = (payload as { s?: unknown } | null)?.s;
      if (typeof subscriptionId === 'string') await takeTurn(scheduler, subscriptionId);
    },
  };
  return { start: () => start(q), stop: () => stop(q) };
}

async function start(q: Queue): Promise<void> {
  const { o, scheduler: s } = q;
  s.stopping = false;
  // A connection per delivery in progress (it holds the subscription's lock), one for the sweep.
  s.db ??= createDb(
    createPool(o.databaseUrl, o.service, o.concurrency + 1, {
      applicationName: `${o.service}-webhooks`,
      connectTimeoutMs: 5_000,
    }),
  );
  if (!q.sealed) {
    // Rows from before encryption are sealed by the first process that delivers (it holds the key).
    const counts = await resealSecrets(s.db, o.secretKeys, 'plaintext');
    q.sealed = true;
    if (counts.sealedPlaintext > 0)
      q.log.info({ sealed: counts.sealedPlaintext }, 'webhook signing secrets stored in plain text are now encrypted');
  }
  if (!q.runner) {
    await launch(q);
    // Once the queue exists: what the service's triggers could not queue before (or a killed process holds).
    await o.queue?.catchUp?.().catch((err: unknown) => {
      q.log.warn({ err: (err as Error).message }, 'queue catch-up failed');
    });
  }
  if (!q.tickTimer) void tick(q);
}

async function stop(q: Queue): Promise<void> {
  const s = q.scheduler;
  s.stopping = true;
  wakeTurns(s);
  if (q.tickTimer) clearTimeout(q.tickTimer);
  await q.runner?.stop().catch(() => {});
  await q.queuePool?.end().catch(() => {});
  q.queuePool = undefined;
  q.runner = undefined;
  await s.db?.destroy().catch(() => {});
}

/** The wake-up loop: a look every WAKE_MS (with, about every ten minutes, the pruning of old history). */
async function tick(q: Queue): Promise<void> {
  const s = q.scheduler;
  try {
    await look(s);
    if (Math.random() < WAKE_MS / 600_000) await repo.pruneHistory(s.db!, repo.HISTORY_DAYS);
  } catch (err) {
    // Postgres unavailable: warned at most once a minute; the next tick tries again.
    if (Date.now() - q.lastWarning > 60_000) {
      q.lastWarning = Date.now();
      q.log.warn({ err: (err as Error).message }, 'webhook wake-up failed; trying again');
    }
  }
  if (!s.stopping) q.tickTimer = setTimeout(() => void tick(q), WAKE_MS);
}

/**
 * graphile-worker stops itself when it hears of a breaking migration of a worker schema, on a
 * channel every schema of the database shares: the first start of another service (or replica)
 * installing its own `<service>_worker` stops this one. So a runner that stops without being
 * asked is started again (its exit code, 57, is not this process's).
 */
async function launch(q: Queue): Promise<void> {
  const { o, log } = q;
  // Its own pool from createPool, whose clients each carry an error listener: a connection
  // Postgres ends (a restart, a terminated backend) while graphile holds it checked out (its
  // LISTEN client) is then a logged warning, never an unhandled 'error' that ends the process.
  q.queuePool ??= createPool(o.databaseUrl, o.service, 3, {
    applicationName: `${o.service}-webhooks`,
    connectTimeoutMs: 5_000,
    waitOutRestarts: true,
    onConnectionError: (err) => log.warn({ err: err.message }, 'webhook queue connection lost'),
  });
  const current = await run({
    pgPool: q.queuePool,
    schema: q.schema,
    concurrency: o.concurrency,
    // Jobs queued for later (a retry past a second) start within this of their time.
    pollInterval: 100,
    noHandleSignals: true,
    taskList: { ...actingAsThemselves(o.queue?.tasks), webhook: q.webhookTask },
    // Its errors repeat every poll while Postgres is away: one line a minute is enough.
    logger: new WorkerLogger(() => (level, message) => {
      if (level !== LogLevel.ERROR || Date.now() - q.lastWorkerLog < 60_000) return;
      q.lastWorkerLog = Date.now();
      log.warn({ worker: message }, 'webhook queue');
    }),
    preset: {
      plugins: [existingSchemaPlugin(q.schema)],
      // Completions are batched (0: those of one tick together) rather than sent one by one
      // unawaited: stopping then waits for them, and a failure is the runner's (which ends and
      // is started again) instead of an unhandled rejection. One-by-one, the jobs that all end
      // at a stop waited for the few queue connections, the pool was ended under them, and
      // their rows stayed locked until graphile's 4 h lock expiry.
      worker: { localQueue: { size: o.concurrency }, completeJobBatchDelay: 0, failJobBatchDelay: 0 },
    },
  });
  q.runner = current;
  const relaunch = () => {
    if (q.scheduler.stopping || q.runner !== current) return;
    if (process.exitCode === 57) process.exitCode = undefined;
    log.info("webhook queue stopped (another process's migration, or Postgres gone); starting it again");
    // At most a second apart: a runner that ends in a Postgres outage (a completion cut off) is
    // started again by these tries, and DESIGN.md has the processes serve again within 2 s of
    // Postgres being back; doubling to 30 s left the queue up to half a minute late after a long
    // outage. (faults-reminders.test's late reminders had another cause: see PatientPool.)
    const retry = (delayMs: number) => {
      setTimeout(() => {
        if (!q.scheduler.stopping) launch(q).catch(() => retry(Math.min(delayMs * 2, 1_000)));
      }, delayMs).unref();
    };
    retry(500);
  };
  current.promise.then(relaunch, relaunch);
}

/**
 * graphile-worker installs itself with `create schema if not exists`, which Postgres refuses to a
 * role without CREATE on the database even when the schema exists. Where the operator made the
 * schema for the service's role (infra/postgres/init.sql), this bootstrap skips that statement.
 */
function existingSchemaPlugin(schema: string): GraphileConfig.Plugin {
  return {
    name: 'WebhookWorkerExistingSchema',
    version: '1.0.0',
    worker: {
      middleware: {
        // Installing or upgrading the queue is a schema change like the services' own.
        async migrate(next, event) {
          await event.client.query('select pg_advisory_lock($1)', [SCHEMA_CHANGE_LOCK]);
          try {
            return await next();
          } finally {
            await event.client.query('select pg_advisory_unlock($1)', [SCHEMA_CHANGE_LOCK]).catch(() => {});
          }
        },
        async bootstrap(next, event) {
          const { rows } = await event.client.query('select 1 from pg_namespace where nspname = $1', [schema]);
          if (rows.length === 0) return next();
          const s = `"${schema}"`;
          await event.client
            .query(`create table if not exists ${s}.migrations(id int primary key, ts timestamptz default now() not null);
alter table ${s}.migrations add column if not exists breaking boolean not null default false;`);
        },
      },
    },
  };
}

/**
 * The service's jobs, each the actor of the events it records: `{ type: 'system', id: <its
 * name> }` (tasks' `reminder` and `task_due`, meetings' `task_sync`), so a payload names its cause.
 */
function actingAsThemselves(tasks: ServiceQueue['tasks'] = {}): Record<string, Task> {
  return Object.fromEntries(
    Object.entries(tasks).map(([name, task]) => [
      name,
      (payload) => runAs({ type: 'system', id: name }, () => task(payload)),
    ]),
  );
}
