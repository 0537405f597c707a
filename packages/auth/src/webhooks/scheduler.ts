/*
 * Which subscription is sent when, in this process: the looks (the outbox follower and the
 * periodic sweep) queue a job per subscription with something new; a job takes a turn in one
 * of the process's slots under the subscription's advisory lock, sends in order until nothing
 * is due or its time is up, and queues its next turn once the lock is let go.
 */
import { sql } from 'kysely';
import type { AnyDb } from '../database/database.js';
import type { EventCatalog } from './events.js';
import * as repo from './repository.js';
import type { DeliveryRow } from './repository.js';
import { OutboxFollower } from './outbox-follower.js';
import type { FilteredEvent, WebhookFilter } from './filter.js';
import { batchSecrets, post, Settled, settleFailure, type Delivery, type PostResult } from './delivery.js';

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
/**
 * How often a look also scans for every due delivery, for what the looks do not see: a write
 * committed long after it began, deliveries left by a process that ended. (A scan walks every
 * settled row vacuum has not yet removed: 11 ms a scan under the bench's load, against 0.1 ms for a look.)
 */
const SWEEP_MS = 5_000;
/** A subscription whose job was queued this recently is not queued again (its job is about to run). */
const REKICK_MS = 1_000;

/** What a turn leaves to do after it let its subscription go: queue its next turn, or forget it. */
type FollowUp = () => Promise<void>;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

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
 * The process's share of the sending, one object that the looks and the jobs' turns work on:
 * which subscriptions it is sending (the slots taken), which it queued a moment ago, and which
 * wait for a retry.
 */
export interface Scheduler {
  readonly delivery: Delivery;
  readonly catalog: EventCatalog;
  /** The slots: jobs this process runs at once. */
  readonly concurrency: number;
  /** The advisory lock's namespace (its second key is the subscription). */
  readonly lock: string;
  /** Set by the worker's start. */
  db: AnyDb | undefined;
  stopping: boolean;
  readonly follower: OutboxFollower;
  lastSweep: number;
  /** The subscriptions this process is sending, with their turns. */
  readonly draining: Map<string, Turn>;
  readonly kickedAt: Map<string, number>;
  /** Subscriptions whose head waits for its retry: the rows behind it look due but are not. */
  readonly blockedUntil: Map<string, number>;
  /** The service's filter of events (subscriptions with a `filter`). */
  readonly filter: WebhookFilter | undefined;
}

/** A scheduler with nothing under way, for `delivery`'s service. */
export function newScheduler(
  delivery: Delivery,
  catalog: EventCatalog,
  concurrency: number,
  filter?: WebhookFilter,
): Scheduler {
  return {
    filter,
    delivery,
    catalog,
    concurrency,
    lock: `${delivery.service}.webhooks`,
    db: undefined,
    stopping: false,
    follower: new OutboxFollower(),
    lastSweep: 0,
    draining: new Map(),
    kickedAt: new Map(),
    blockedUntil: new Map(),
  };
}

/** Ends every turn's wait for more (the process is stopping, or a slot is wanted). */
export function wakeTurns(s: Scheduler): void {
  for (const turn of s.draining.values()) turn.wake();
}

/*
 * Waking: every look (WAKE_MS) finds the subscriptions with a new delivery (and every SWEEP_MS any
 * due one) and queues their job, except those it queued a moment ago (their job is about to run,
 * here or in another process) and those whose head waits for its retry. One this process is
 * sending itself is queued again when that turn ends, if the look may have seen a delivery the
 * turn's last read did not.
 */

/** One look: marks the turns under way that have more, and queues a job for the others. */
export async function look(s: Scheduler): Promise<void> {
  const db = s.db!;
  const sweep = Date.now() - s.lastSweep >= SWEEP_MS;
  const found = await s.follower.look(db);
  if (sweep) {
    s.lastSweep = Date.now();
    for (const id of await repo.dueSubscriptions(db)) found.add(id);
  }
  // Taken once the queries have answered: their snapshots may be later than a turn's read that
  // began after they were sent, so what they found is new to every turn whose read began before now.
  const now = Date.now();
  for (const id of found) {
    const turn = s.draining.get(id);
    turn?.found(now);
    if (turn || now - (s.kickedAt.get(id) ?? 0) < REKICK_MS || (s.blockedUntil.get(id) ?? 0) > now) continue;
    s.kickedAt.set(id, now);
    await repo.kick(db, id, null);
  }
  if (s.kickedAt.size > 10_000) s.kickedAt.clear();
  if (s.blockedUntil.size > 10_000) s.blockedUntil.clear();
}

/**
 * One job of `subscriptionId`: a turn in one of this process's slots, under the subscription's
 * advisory lock (on its own connection, so a killed process lets go at once), then what the turn
 * left to do (its next turn, or none).
 */
export async function takeTurn(s: Scheduler, subscriptionId: string): Promise<void> {
  // graphile starts a second job of one key when a kick finds the first one running: the turn
  // this process has under way sends what this job would have (tried for the lock, it would
  // fail and be put off by BUSY_RETRY_MS, and a later kick keeps that time).
  const running = s.draining.get(subscriptionId);
  if (running) return running.found(Date.now());
  const turn = new Turn();
  s.draining.set(subscriptionId, turn);
  // Only this turn: by the time this job ends, a look may have queued the next, which holds it now.
  const release = () => {
    if (s.draining.get(subscriptionId) === turn) s.draining.delete(subscriptionId);
  };
  // The last free slot taken: turns waiting for more give theirs back.
  if (s.draining.size >= s.concurrency) wakeTurns(s);
  try {
    await s.db!.connection().execute(async (conn) => {
      const { rows } = await sql<{
        ok: boolean;
      }>`select pg_try_advisory_lock(hashtext(${s.lock}), hashtext(${subscriptionId})) as ok`.execute(conn);
      let then: FollowUp | undefined;
      if (!rows[0]?.ok) {
        // Another process is sending it.
        then = () => repo.kick(conn, subscriptionId, new Date(Date.now() + BUSY_RETRY_MS));
      } else {
        s.kickedAt.delete(subscriptionId);
        s.blockedUntil.delete(subscriptionId);
        try {
          then = await drain(s, conn, subscriptionId, turn);
        } finally {
          await sql`select pg_advisory_unlock(hashtext(${s.lock}), hashtext(${subscriptionId}))`
            .execute(conn)
            .catch(() => {});
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
}

/**
 * Sends the subscription's pending deliveries in order until none is due; the caller holds its
 * lock. They are read a batch at a time, and what the turn delivered is settled in one statement
 * once it has sent all it read (or every BATCH deliveries, or before a failure is recorded), so a
 * busy subscription costs its receiver's answers and little else: settling each batch on its own
 * was almost a third of the worker's statements. A crash before they are settled sends them again
 * (at least once).
 */
async function drain(s: Scheduler, conn: AnyDb, subscriptionId: string, turn: Turn): Promise<FollowUp | undefined> {
  const settled = new Settled(subscriptionId, s.delivery.count);
  const then = await send(s, conn, subscriptionId, turn, settled);
  await settled.flush(conn);
  return then;
}

/** The sending of one turn, and what is left to do once its deliveries are settled and its lock let go. */
async function send(
  s: Scheduler,
  conn: AnyDb,
  subscriptionId: string,
  turn: Turn,
  settled: Settled,
): Promise<FollowUp | undefined> {
  const turnEnds = Date.now() + TURN_MS;
  for (;;) {
    if (s.stopping) return () => repo.kick(conn, subscriptionId, null);
    turn.readAt = Date.now();
    const next = await repo.nextBatch(conn, subscriptionId, BATCH, settled.unsettled);
    // Gone with its account (the cascade cannot reach the outbox, which has no foreign key).
    if (!next) return () => repo.forgetSubscription(conn, subscriptionId);
    const { sub, scopes, pending: batch } = next;
    settled.failingSince = sub.failing_since;
    if (!sub.enabled) return async () => s.delivery.count('skipped', await repo.skipPending(conn, sub.id));
    const secrets = batchSecrets(s.delivery, sub);
    const unmatched = await filteredOut(s, conn, next);
    let failed: { head: DeliveryRow; result: PostResult } | undefined;
    let waitUntil: number | undefined;
    for (const d of batch) {
      const scope = s.catalog[d.type];
      if ((scope !== undefined && scopes !== null && !scopes.has(scope)) || unmatched.has(d.seq)) {
        settled.skip(d);
        continue;
      }
      const due = Date.parse(d.next_attempt_at);
      if (due > Date.now()) {
        waitUntil = due;
        break;
      }
      if (Date.now() > turnEnds) break;
      const result = await post(s.delivery, sub, secrets, d);
      if (result.error !== null) {
        failed = { head: d, result };
        break;
      }
      settled.delivered(d, result);
    }
    if (failed) {
      // In order: what was delivered clears failing_since before the failure sets it again.
      await settled.flush(conn);
      await settleFailure(s.delivery, conn, sub, failed.head, failed.result);
      continue;
    }
    if (settled.size >= BATCH) await settled.flush(conn);
    if (waitUntil !== undefined) {
      const wait = waitUntil - Date.now();
      if (wait <= SLEEP_IN_JOB_MS && Date.now() + wait < turnEnds) {
        await sleep(Math.max(wait, 0));
        continue;
      }
      s.blockedUntil.set(sub.id, waitUntil);
      const at = new Date(waitUntil);
      return () => repo.kick(conn, sub.id, at);
    }
    if (Date.now() > turnEnds) return () => repo.kick(conn, sub.id, null);
    // Everything the read found is sent: read again once a look finds more.
    if (batch.length < BATCH && !(await more(s, conn, turn, turnEnds, settled))) return undefined;
  }
}

/**
 * The deliveries of the batch its subscription's filter does not match (none without a filter):
 * judged by the service, all at once, on each event's data at its own time in the subscriber
 * account's zone. They are skipped like an event its changer may not read: never sent, and a
 * replay judges them again. Pings are not judged.
 */
async function filteredOut(s: Scheduler, conn: AnyDb, batch: repo.DeliveryBatch): Promise<ReadonlySet<number>> {
  const { sub, zone } = batch;
  const events = batch.pending.filter((d) => d.type !== 'ping');
  if (!s.filter || sub.filter === null || events.length === 0) return new Set();
  const bodies = events.map((d) => JSON.parse(d.body) as FilteredEvent);
  const matches = await s.filter.matches(conn, sub.filter, bodies, zone);
  return new Set(events.filter((_d, i) => !matches[i]).map((d) => d.seq));
}

/**
 * Waits until a look finds something the turn's last read may not have seen (true), having
 * settled what was sent (the delivery log shows an attempt once its receiver has answered);
 * false when the turn should end instead: its time is up, the process is stopping, or every slot
 * is taken (another job may be waiting).
 */
async function more(s: Scheduler, conn: AnyDb, turn: Turn, turnEnds: number, settled: Settled): Promise<boolean> {
  if (turn.seenAt >= turn.readAt) return true;
  await settled.flush(conn);
  for (;;) {
    if (turn.seenAt >= turn.readAt) return true;
    if (s.stopping || s.draining.size >= s.concurrency || Date.now() >= turnEnds) return false;
    await turn.wait(turnEnds - Date.now());
  }
}
