import { LogLevel, Logger as WorkerLogger, run, type Runner, type Task } from 'graphile-worker';
import { sql } from 'kysely';
import type { Logger } from 'pino';
import { Counter, Gauge, type Registry } from 'prom-client';
import { SCHEMA_CHANGE_LOCK, createDb, createPool, type AnyDb } from '../database/database.js';
import type { EventCatalog } from './events.js';
import * as repo from './repository.js';
import type { DeliveryRow, SubscriptionRow } from './repository.js';
import { postJson } from './http-post.js';
import { signatureHeader } from './signing.js';
import { SecretUnreadableError, type SecretKeys } from './secret-box.js';
import { resealSecrets, signingSecrets } from './stored-secrets.js';
import { OutboxFollower } from './outbox-follower.js';
import { inLinkedSpan } from './trace-links.js';
import { TargetRefusedError } from './target.js';
import { workerSchema } from './tables.js';

const HOUR = 3600_000;
/** A delivery is retried for this long after its event, then given up. */
const RETRY_WINDOW_MS = 24 * HOUR;
/** A subscription whose deliveries fail for this long is disabled, with a reason. */
const DISABLE_AFTER_MS = 5 * 24 * HOUR;
/** The receiver's time to answer 2xx. */
const TIMEOUT_MS = 10_000;
/** Pending deliveries read (and settled) at once. */
const BATCH = 100;
/** A wait up to this long is slept in the job (to the millisecond); a longer one is a scheduled job. */
const SLEEP_IN_JOB_MS = 1_000;
/**
 * A job gives its worker back after this long, queueing its subscription's next turn (others wait
 * meanwhile). Until then, while the process has a free slot, a turn that has sent everything waits
 * for the looks to find more rather than ending: a busy subscription is one job per turn, not one
 * per look (a job costs about 1 ms of Postgres to queue and claim, against 0.1 ms to read a batch).
 */
const TURN_MS = 2_000;
/** When another process holds a subscription, its next turn is this much later. */
const BUSY_RETRY_MS = 500;
/** How often a process looks for new deliveries (the first try starts within this of the commit, and the job's start). */
const WAKE_MS = 100;
/**
 * How often it also scans for every due delivery, for what the looks do not see: a write committed
 * long after it began, deliveries left by a process that ended. (A scan walks every settled row
 * vacuum has not yet removed: 11 ms a scan under the bench's load, against 0.1 ms for a look.)
 */
const SWEEP_MS = 5_000;
/** A subscription whose job was queued this recently is not queued again (its job is about to run). */
const REKICK_MS = 1_000;
/** Settled deliveries and attempts are kept this long (GET /:id/deliveries shows the latest). */
const HISTORY_DAYS = 7;

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
}

export interface WebhookWorker {
  start(): Promise<void>;
  stop(): Promise<void>;
}

type Outcome = 'delivered' | 'retry' | 'failed' | 'skipped';
/** What a turn leaves to do after it let its subscription go: queue its next turn, or forget it. */
type FollowUp = () => Promise<void>;
type PostResult = { status: number | null; error: string | null; ms: number };

/** The retry delay after `attempt` failed tries: the base doubling, at most an hour. */
const retryDelayMs = (baseMs: number, attempt: number): number => Math.min(baseMs * 2 ** Math.min(attempt - 1, 30), HOUR);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** `fn`, called at most once: later calls answer its value, or throw what it threw. */
function once<T>(fn: () => T): () => T {
  let outcome: { value: T } | { error: unknown } | undefined;
  return () => {
    if (!outcome) {
      try {
        outcome = { value: fn() };
      } catch (error) {
        outcome = { error };
      }
    }
    if ('error' in outcome) throw outcome.error;
    return outcome.value;
  };
}

/**
 * One job's hold of a subscription: when it last read a batch, and when a look last found
 * something new for the subscription (a look after the read may have found what the read missed).
 */
class Turn {
  readAt = 0;
  seenAt = 0;
  private waiting: (() => void) | undefined;

  found(at: number): void {
    this.seenAt = at;
    this.wake();
  }

  /** Ends a {@link wait} now. */
  wake(): void {
    this.waiting?.();
  }

  /** Resolves after `ms`, or sooner at a {@link wake}. */
  async wait(ms: number): Promise<void> {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => this.waiting?.(), Math.max(ms, 0));
      this.waiting = () => {
        clearTimeout(timer);
        this.waiting = undefined;
        resolve();
      };
    });
  }
}

/**
 * The delivery worker: graphile-worker (in `<schema>_worker`) runs one `webhook` job per
 * subscription with something to send. A job holds the subscription's advisory lock (on its own
 * connection, so a killed process lets go at once) and sends its pending deliveries in commit
 * order, one at a time, retrying the head with backoff before anything behind it: across
 * processes and replicas no event is ever sent twice at once, and none overtakes another.
 */
export function createWebhookWorker(o: WebhookWorkerOptions): WebhookWorker {
  const schema = workerSchema(o.service);
  let db: AnyDb | undefined;
  let runner: Runner | undefined;
  let queuePool: ReturnType<typeof createPool> | undefined;
  let tickTimer: NodeJS.Timeout | undefined;
  let stopping = false;
  const log = o.logger.child({ component: 'webhooks' });

  const deliveries = new Counter({
    name: 'webhook_deliveries_total',
    help: 'Webhook delivery attempts by outcome: delivered, retry (failed, tried again later), failed (given up after 24 h), skipped (subscription disabled, or whoever changed it last lost the scope)',
    labelNames: ['outcome'],
    registers: [o.registry],
  });
  for (const outcome of ['delivered', 'retry', 'failed', 'skipped']) deliveries.inc({ outcome }, 0);
  new Gauge({
    name: 'webhook_queue_age_seconds',
    help: 'Seconds since the oldest pending webhook delivery became due (0: nothing waits)',
    registers: [o.registry],
    async collect() {
      if (!db) return;
      try {
        this.set(await repo.queueAgeSeconds(db));
      } catch {
        // Postgres unavailable: the last value stays.
      }
    },
  });

  const count = (outcome: Outcome, n = 1) => deliveries.inc({ outcome }, n);

  /*
   * Waking: every WAKE_MS this process looks for subscriptions with a new delivery (and every
   * SWEEP_MS for any due one) and queues their job, except those it queued a moment ago (their job
   * is about to run, here or in another process) and those whose head waits for its retry. One it
   * is sending itself is queued again when that turn ends, if the look may have seen a delivery
   * the turn's last read did not.
   */
  const follower = new OutboxFollower();
  let lastSweep = 0;
  /** The subscriptions this process is sending, with their turns. */
  const draining = new Map<string, Turn>();
  const kickedAt = new Map<string, number>();
  /** Subscriptions whose head waits for its retry: the rows behind it look due but are not. */
  const blockedUntil = new Map<string, number>();

  async function wake(): Promise<void> {
    const sweep = Date.now() - lastSweep >= SWEEP_MS;
    const found = await follower.look(db!);
    if (sweep) {
      lastSweep = Date.now();
      for (const id of await repo.dueSubscriptions(db!)) found.add(id);
    }
    // Taken once the queries have answered: their snapshots may be later than a turn's read that
    // began after they were sent, so what they found is new to every turn whose read began before now.
    const now = Date.now();
    for (const id of found) {
      const turn = draining.get(id);
      turn?.found(now);
      if (turn || now - (kickedAt.get(id) ?? 0) < REKICK_MS || (blockedUntil.get(id) ?? 0) > now) continue;
      kickedAt.set(id, now);
      await repo.kick(db!, id, null);
    }
    if (kickedAt.size > 10_000) kickedAt.clear();
    if (blockedUntil.size > 10_000) blockedUntil.clear();
  }

  /**
   * One delivery attempt, in a span of its own trace (its HTTP client span under it) linked to the
   * trace of the write that emitted the event, when that was traced.
   */
  function post(sub: SubscriptionRow, secrets: () => string[], d: DeliveryRow): Promise<PostResult> {
    const attributes = { 'webhook.event_id': d.event_id, 'webhook.event_type': d.type, 'webhook.subscription_id': sub.id, 'webhook.attempt': d.attempts + 1 };
    return inLinkedSpan(`webhook deliver ${d.type}`, d.traceparent, attributes, () => attempt(sub, secrets, d), (r) => r.error);
  }

  /** `secrets` opens the subscription's signing secrets, once a batch (decrypting them for each event was 8% of the worker's JavaScript time in a CPU profile). */
  async function attempt(sub: SubscriptionRow, secrets: () => string[], d: DeliveryRow): Promise<PostResult> {
    const started = Date.now();
    const timestamp = Math.floor(Date.now() / 1000);
    let signing: string[];
    try {
      signing = secrets();
    } catch (err) {
      if (!(err instanceof SecretUnreadableError)) throw err;
      // A failed attempt like any other (retried, in the delivery log): the key may come back.
      log.warn({ subscriptionId: sub.id, keyId: err.keyId, currentKeyId: o.secretKeys.current.id }, 'webhook signing secret cannot be decrypted; delivery not sent');
      return { status: null, error: `not sent: ${err.message}`, ms: Date.now() - started };
    }
    try {
      const status = await postJson(sub.url, {
        'content-type': 'application/json',
        'user-agent': `${o.service}-webhooks/1`,
        'webhook-id': d.event_id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signatureHeader(signing, d.event_id, timestamp, d.body),
      }, d.body, TIMEOUT_MS, { allowPrivate: o.allowPrivate, traceContext: o.traceContext });
      const ok = status >= 200 && status < 300;
      return { status, error: ok ? null : status >= 300 && status < 400 ? 'redirect not followed' : 'non-2xx answer', ms: Date.now() - started };
    } catch (err) {
      // Every attempt checks the address it connects to: a name that comes to resolve to a private one is refused then.
      if (err instanceof TargetRefusedError) return { status: null, error: `target refused: ${err.message}`, ms: Date.now() - started };
      const name = (err as Error).name;
      return { status: null, error: name === 'TimeoutError' ? `no answer within ${TIMEOUT_MS / 1000} s` : 'connection failed', ms: Date.now() - started };
    }
  }

  /**
   * Sends the subscription's pending deliveries in order until none is due; the caller holds its
   * lock. They are read a batch at a time, and what the turn delivered is settled in one statement
   * once it has sent all it read (or every BATCH deliveries, or before a failure is recorded), so a
   * busy subscription costs its receiver's answers and little else: settling each batch on its own
   * was almost a third of the worker's statements. A crash before they are settled sends them again
   * (at least once).
   */
  async function drain(conn: AnyDb, subscriptionId: string, turn: Turn): Promise<FollowUp | undefined> {
    const settled = new Settled(subscriptionId);
    const then = await send(conn, subscriptionId, turn, settled);
    await settled.flush(conn);
    return then;
  }

  /** The sending of one turn, and what is left to do once its deliveries are settled and its lock let go. */
  async function send(conn: AnyDb, subscriptionId: string, turn: Turn, settled: Settled): Promise<FollowUp | undefined> {
    const turnEnds = Date.now() + TURN_MS;
    for (;;) {
      if (stopping) return () => repo.kick(conn, subscriptionId, null);
      turn.readAt = Date.now();
      const next = await repo.nextBatch(conn, subscriptionId, BATCH, settled.unsettled);
      // Gone with its account (the cascade cannot reach the outbox, which has no foreign key).
      if (!next) return () => repo.forgetSubscription(conn, subscriptionId);
      const { sub, scopes, pending: batch } = next;
      settled.failingSince = sub.failing_since;
      if (!sub.enabled) return async () => count('skipped', await repo.skipPending(conn, sub.id));
      const secrets = once(() => signingSecrets(o.secretKeys, sub));
      let failed: { head: DeliveryRow; result: PostResult } | undefined;
      let waitUntil: number | undefined;
      for (const d of batch) {
        const scope = o.catalog[d.type];
        if (scope !== undefined && scopes !== null && !scopes.has(scope)) {
          settled.skip(d);
          continue;
        }
        const due = Date.parse(d.next_attempt_at);
        if (due > Date.now()) {
          waitUntil = due;
          break;
        }
        if (Date.now() > turnEnds) break;
        const result = await post(sub, secrets, d);
        if (result.error !== null) {
          failed = { head: d, result };
          break;
        }
        settled.delivered(d, result);
      }
      if (failed) {
        // In order: what was delivered clears failing_since before the failure sets it again.
        await settled.flush(conn);
        await fail(conn, sub, failed.head, failed.result);
        continue;
      }
      if (settled.size >= BATCH) await settled.flush(conn);
      if (waitUntil !== undefined) {
        const wait = waitUntil - Date.now();
        if (wait <= SLEEP_IN_JOB_MS && Date.now() + wait < turnEnds) {
          await sleep(Math.max(wait, 0));
          continue;
        }
        blockedUntil.set(sub.id, waitUntil);
        const at = new Date(waitUntil);
        return () => repo.kick(conn, sub.id, at);
      }
      if (Date.now() > turnEnds) return () => repo.kick(conn, sub.id, null);
      // Everything the read found is sent: read again once a look finds more.
      if (batch.length < BATCH && !(await more(conn, turn, turnEnds, settled))) return undefined;
    }
  }

  /**
   * Waits until a look finds something the turn's last read may not have seen (true), having
   * settled what was sent (the delivery log shows an attempt once its receiver has answered);
   * false when the turn should end instead: its time is up, the process is stopping, or every slot
   * is taken (another job may be waiting).
   */
  async function more(conn: AnyDb, turn: Turn, turnEnds: number, settled: Settled): Promise<boolean> {
    if (turn.seenAt >= turn.readAt) return true;
    await settled.flush(conn);
    for (;;) {
      if (turn.seenAt >= turn.readAt) return true;
      if (stopping || draining.size >= o.concurrency || Date.now() >= turnEnds) return false;
      await turn.wait(turnEnds - Date.now());
    }
  }

  /**
   * What a turn did and has not written yet: one statement for what was delivered (and one for
   * what was skipped). Those rows stay pending until written: reads leave them out.
   */
  class Settled {
    /** The subscription's failing_since as last read: a delivery clears it. */
    failingSince: string | null = null;
    private skipped: number[] = [];
    private done: number[] = [];
    private attempts: Parameters<typeof repo.settleDelivered>[2] = [];

    constructor(private readonly subscriptionId: string) {}

    get size(): number {
      return this.done.length + this.skipped.length;
    }

    get unsettled(): number[] {
      return [...this.done, ...this.skipped];
    }

    skip(d: DeliveryRow): void {
      this.skipped.push(d.seq);
    }

    delivered(d: DeliveryRow, result: PostResult): void {
      this.done.push(d.seq);
      this.attempts.push({ subscription_id: this.subscriptionId, event_id: d.event_id, type: d.type, attempt: d.attempts + 1, status_code: result.status, ms: result.ms, error: null, next_attempt_at: null });
    }

    async flush(conn: AnyDb): Promise<void> {
      const { done, attempts, skipped } = this;
      this.done = [];
      this.attempts = [];
      this.skipped = [];
      if (done.length > 0) {
        await repo.settleDelivered(conn, done, attempts);
        if (this.failingSince !== null) await repo.setFailingSince(conn, this.subscriptionId, null);
        this.failingSince = null;
        count('delivered', done.length);
      }
      if (skipped.length > 0) {
        await repo.settleDeliveries(conn, skipped, 'skipped');
        count('skipped', skipped.length);
      }
    }
  }

  /** A failed try of the head: its next time (or given up after 24 h), and the 5-day rule. */
  async function fail(conn: AnyDb, sub: SubscriptionRow, head: DeliveryRow, result: PostResult): Promise<void> {
    const attempt = head.attempts + 1;
    const next = new Date(Date.now() + retryDelayMs(o.retryBaseMs, attempt));
    const giveUp = next.getTime() > Date.parse(head.created_at) + RETRY_WINDOW_MS;
    if (giveUp) await repo.settleDeliveries(conn, [head.seq], 'failed');
    else await repo.postponeDelivery(conn, head.seq, attempt, next);
    await repo.insertAttempts(conn, [{
      subscription_id: sub.id, event_id: head.event_id, type: head.type, attempt, status_code: result.status, ms: result.ms, error: result.error,
      next_attempt_at: giveUp ? null : next.toISOString(),
    }]);
    count(giveUp ? 'failed' : 'retry');
    if (sub.failing_since === null) {
      await repo.setFailingSince(conn, sub.id, 'now');
    } else if (Date.now() - Date.parse(sub.failing_since) >= DISABLE_AFTER_MS) {
      await repo.updateSubscription(conn, sub.account_id, sub.id, {
        enabled: false,
        disabled_reason: `Deliveries failed for 5 days (since ${sub.failing_since}); the last answer was ${result.status ?? result.error}`,
      });
      log.warn({ subscriptionId: sub.id }, 'webhook subscription disabled after 5 days of failures');
    }
  }

  const webhookTask: Task = async (payload) => {
    const subscriptionId = (payload as { s?: unknown } | null)?.s;
    if (typeof subscriptionId !== 'string') return;
    // graphile starts a second job of one key when a kick finds the first one running: the turn
    // this process has under way sends what this job would have (tried for the lock, it would
    // fail and be put off by BUSY_RETRY_MS, and a later kick keeps that time).
    const running = draining.get(subscriptionId);
    if (running) return running.found(Date.now());
    const turn = new Turn();
    draining.set(subscriptionId, turn);
    // Only this turn: by the time this job ends, a look may have queued the next, which holds it now.
    const release = () => {
      if (draining.get(subscriptionId) === turn) draining.delete(subscriptionId);
    };
    // The last free slot taken: turns waiting for more give theirs back.
    if (draining.size >= o.concurrency) for (const t of draining.values()) t.wake();
    try {
      await db!.connection().execute(async (conn) => {
        const lock = `${o.service}.webhooks`;
        const { rows } = await sql<{ ok: boolean }>`select pg_try_advisory_lock(hashtext(${lock}), hashtext(${subscriptionId})) as ok`.execute(conn);
        let then: FollowUp | undefined;
        if (!rows[0]?.ok) {
          // Another process is sending it.
          then = () => repo.kick(conn, subscriptionId, new Date(Date.now() + BUSY_RETRY_MS));
        } else {
          kickedAt.delete(subscriptionId);
          blockedUntil.delete(subscriptionId);
          try {
            then = await drain(conn, subscriptionId, turn);
          } finally {
            await sql`select pg_advisory_unlock(hashtext(${lock}), hashtext(${subscriptionId}))`.execute(conn).catch(() => {});
          }
        }
        // The next turn is queued once the lock is let go, or it could start, find it held and be
        // put off. A look before the delete marks this turn instead of queueing one.
        release();
        if (then) await then();
        // A look found something new after the last read began: it may have committed after that read.
        else if (turn.seenAt >= turn.readAt) await repo.kick(conn, subscriptionId, null);
      });
    } finally {
      release();
    }
  };

  /** The wake-up loop (with, about every ten minutes, the pruning of old history). */
  async function tick(): Promise<void> {
    try {
      await wake();
      if (Math.random() < WAKE_MS / 600_000) await repo.pruneHistory(db!, HISTORY_DAYS);
    } catch (err) {
      // Postgres unavailable: warned at most once a minute; the next tick tries again.
      if (Date.now() - lastWarning > 60_000) {
        lastWarning = Date.now();
        log.warn({ err: (err as Error).message }, 'webhook wake-up failed; trying again');
      }
    }
    if (!stopping) tickTimer = setTimeout(() => void tick(), WAKE_MS);
  }
  let lastWarning = 0;
  let lastWorkerLog = 0;
  let sealed = false;

  /**
   * graphile-worker stops itself when it hears of a breaking migration of a worker schema, on a
   * channel every schema of the database shares: the first start of another service (or replica)
   * installing its own `<service>_worker` stops this one. So a runner that stops without being
   * asked is started again (its exit code, 57, is not this process's).
   */
  async function launch(): Promise<void> {
    // Its own pool from createPool, whose clients each carry an error listener: a connection
    // Postgres ends (a restart, a terminated backend) while graphile holds it checked out (its
    // LISTEN client) is then a logged warning, never an unhandled 'error' that ends the process.
    queuePool ??= createPool(o.databaseUrl, o.service, 3, {
      applicationName: `${o.service}-webhooks`,
      connectTimeoutMs: 5_000,
      onConnectionError: (err) => log.warn({ err: err.message }, 'webhook queue connection lost'),
    });
    const current = await run({
      pgPool: queuePool,
      schema,
      concurrency: o.concurrency,
      // Jobs queued for later (a retry past a second) start within this of their time.
      pollInterval: 100,
      noHandleSignals: true,
      taskList: { webhook: webhookTask },
      // Its errors repeat every poll while Postgres is away: one line a minute is enough.
      logger: new WorkerLogger(() => (level, message) => {
        if (level !== LogLevel.ERROR || Date.now() - lastWorkerLog < 60_000) return;
        lastWorkerLog = Date.now();
        log.warn({ worker: message }, 'webhook queue');
      }),
      preset: {
        plugins: [existingSchemaPlugin(schema)],
        // Completions are batched (0: those of one tick together) rather than sent one by one
        // unawaited: stopping then waits for them, and a failure is the runner's (which ends and
        // is started again) instead of an unhandled rejection. One-by-one, the jobs that all end
        // at a stop waited for the few queue connections, the pool was ended under them, and
        // their rows stayed locked until graphile's 4 h lock expiry.
        worker: { localQueue: { size: o.concurrency }, completeJobBatchDelay: 0, failJobBatchDelay: 0 },
      },
    });
    runner = current;
    const relaunch = () => {
      if (stopping || runner !== current) return;
      if (process.exitCode === 57) process.exitCode = undefined;
      log.info('webhook queue stopped by another process\'s migration; starting it again');
      const retry = (delayMs: number) => {
        setTimeout(() => {
          if (!stopping) launch().catch(() => retry(Math.min(delayMs * 2, 30_000)));
        }, delayMs).unref();
      };
      retry(500);
    };
    current.promise.then(relaunch, relaunch);
  }

  return {
    async start() {
      stopping = false;
      // A connection per delivery in progress (it holds the subscription's lock), one for the sweep.
      db ??= createDb(createPool(o.databaseUrl, o.service, o.concurrency + 1, { applicationName: `${o.service}-webhooks`, connectTimeoutMs: 5_000 }));
      if (!sealed) {
        // Rows from before encryption are sealed by the first process that delivers (it holds the key).
        const counts = await resealSecrets(db, o.secretKeys, 'plaintext');
        sealed = true;
        if (counts.sealedPlaintext > 0) log.info({ sealed: counts.sealedPlaintext }, 'webhook signing secrets stored in plain text are now encrypted');
      }
      if (!runner) await launch();
      if (!tickTimer) void tick();
    },
    async stop() {
      stopping = true;
      for (const turn of draining.values()) turn.wake();
      if (tickTimer) clearTimeout(tickTimer);
      await runner?.stop().catch(() => {});
      await queuePool?.end().catch(() => {});
      queuePool = undefined;
      runner = undefined;
      await db?.destroy().catch(() => {});
    },
  };
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
          await event.client.query(`create table if not exists ${s}.migrations(id int primary key, ts timestamptz default now() not null);
alter table ${s}.migrations add column if not exists breaking boolean not null default false;`);
        },
      },
    },
  };
}
