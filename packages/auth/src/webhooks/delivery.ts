/*
 * One delivery attempt and its settling: sign, POST with the receiver's timeout, then the rows
 * delivered (batched per turn) or the head's retry, give-up and the 5-day disabling rule.
 */
import type { Logger } from 'pino';
import type { AnyDb } from '../database/database.js';
import * as repo from './repository.js';
import type { DeliveryRow, SubscriptionRow } from './repository.js';
import { postJson } from './http-post.js';
import { signatureHeader } from './signing.js';
import { SecretUnreadableError, type SecretKeys } from './secret-box.js';
import { signingSecrets } from './stored-secrets.js';
import { inLinkedSpan } from './trace-links.js';
import { TargetRefusedError } from './target.js';
import type { CountOutcome } from './metrics.js';

const HOUR = 3600_000;
/** A delivery is retried for this long after its event, then given up. */
const RETRY_WINDOW_MS = 24 * HOUR;
/** A subscription whose deliveries fail for this long is disabled, with a reason. */
const DISABLE_AFTER_MS = 5 * 24 * HOUR;
/** The receiver's time to answer 2xx. */
const TIMEOUT_MS = 10_000;

/** What one attempt needs of the worker: who signs and sends, how, and where its outcome is counted. */
export interface Delivery {
  service: string;
  secretKeys: SecretKeys;
  allowPrivate: boolean;
  traceContext: boolean;
  retryBaseMs: number;
  log: Logger;
  count: CountOutcome;
}

/** One attempt's answer: the receiver's status (null: none), why it failed (null: delivered), and how long it took. */
export type PostResult = { status: number | null; error: string | null; ms: number };

/** The retry delay after `attempt` failed tries: the base doubling, at most an hour. */
const retryDelayMs = (baseMs: number, attempt: number): number =>
  Math.min(baseMs * 2 ** Math.min(attempt - 1, 30), HOUR);

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
 * The subscription's signing secrets, opened at the first attempt that needs them and kept for the
 * batch (decrypting them for each event was 8% of the worker's JavaScript time in a CPU profile).
 */
export function batchSecrets(d: Delivery, sub: SubscriptionRow): () => string[] {
  return once(() => signingSecrets(d.secretKeys, sub));
}

/**
 * One delivery attempt, in a span of its own trace (its HTTP client span under it) linked to the
 * trace of the write that emitted the event, when that was traced.
 */
export function post(
  d: Delivery,
  sub: SubscriptionRow,
  secrets: () => string[],
  row: DeliveryRow,
): Promise<PostResult> {
  const attributes = {
    'webhook.event_id': row.event_id,
    'webhook.event_type': row.type,
    'webhook.subscription_id': sub.id,
    'webhook.attempt': row.attempts + 1,
  };
  return inLinkedSpan(
    `webhook deliver ${row.type}`,
    row.traceparent,
    attributes,
    () => attempt(d, sub, secrets, row),
    (r) => r.error,
  );
}

/** Signs the event with every current secret of the subscription and POSTs it; never throws for the receiver's sake. */
async function attempt(
  d: Delivery,
  sub: SubscriptionRow,
  secrets: () => string[],
  row: DeliveryRow,
): Promise<PostResult> {
  const started = Date.now();
  const timestamp = Math.floor(Date.now() / 1000);
  let signing: string[];
  try {
    signing = secrets();
  } catch (err) {
    if (!(err instanceof SecretUnreadableError)) throw err;
    // A failed attempt like any other (retried, in the delivery log): the key may come back.
    d.log.warn(
      { subscriptionId: sub.id, keyId: err.keyId, currentKeyId: d.secretKeys.current.id },
      'webhook signing secret cannot be decrypted; delivery not sent',
    );
    return { status: null, error: `not sent: ${err.message}`, ms: Date.now() - started };
  }
  try {
    const status = await postJson(
      sub.url,
      {
        'content-type': 'application/json',
        'user-agent': `${d.service}-webhooks/1`,
        'webhook-id': row.event_id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signatureHeader(signing, row.event_id, timestamp, row.body),
      },
      row.body,
      TIMEOUT_MS,
      { allowPrivate: d.allowPrivate, traceContext: d.traceContext },
    );
    const ok = status >= 200 && status < 300;
    return {
      status,
      error: ok ? null : status >= 300 && status < 400 ? 'redirect not followed' : 'non-2xx answer',
      ms: Date.now() - started,
    };
  } catch (err) {
    // Every attempt checks the address it connects to: a name that comes to resolve to a private one is refused then.
    if (err instanceof TargetRefusedError)
      return { status: null, error: `target refused: ${err.message}`, ms: Date.now() - started };
    const name = (err as Error).name;
    return {
      status: null,
      error: name === 'TimeoutError' ? `no answer within ${TIMEOUT_MS / 1000} s` : 'connection failed',
      ms: Date.now() - started,
    };
  }
}

/**
 * What a turn did and has not written yet: one statement for what was delivered (and one for
 * what was skipped). Those rows stay pending until written: reads leave them out.
 */
export class Settled {
  /** The subscription's failing_since as last read: a delivery clears it. */
  failingSince: string | null = null;
  private skipped: number[] = [];
  private done: number[] = [];
  private attempts: Parameters<typeof repo.settleDelivered>[2] = [];

  constructor(
    private readonly subscriptionId: string,
    private readonly count: CountOutcome,
  ) {}

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
    this.attempts.push({
      subscription_id: this.subscriptionId,
      event_id: d.event_id,
      type: d.type,
      attempt: d.attempts + 1,
      status_code: result.status,
      ms: result.ms,
      error: null,
      next_attempt_at: null,
    });
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
      this.count('delivered', done.length);
    }
    if (skipped.length > 0) {
      await repo.settleDeliveries(conn, skipped, 'skipped');
      this.count('skipped', skipped.length);
    }
  }
}

/** A failed try of the head: its next time (or given up after 24 h), and the 5-day rule. */
export async function settleFailure(
  d: Delivery,
  conn: AnyDb,
  sub: SubscriptionRow,
  head: DeliveryRow,
  result: PostResult,
): Promise<void> {
  const attempt = head.attempts + 1;
  const next = new Date(Date.now() + retryDelayMs(d.retryBaseMs, attempt));
  const giveUp = next.getTime() > Date.parse(head.replayed_at ?? head.created_at) + RETRY_WINDOW_MS;
  if (giveUp) await repo.settleDeliveries(conn, [head.seq], 'failed');
  else await repo.postponeDelivery(conn, head.seq, attempt, next);
  await repo.insertAttempts(conn, [
    {
      subscription_id: sub.id,
      event_id: head.event_id,
      type: head.type,
      attempt,
      status_code: result.status,
      ms: result.ms,
      error: result.error,
      next_attempt_at: giveUp ? null : next.toISOString(),
    },
  ]);
  d.count(giveUp ? 'failed' : 'retry');
  if (sub.failing_since === null) {
    await repo.setFailingSince(conn, sub.id, 'now');
  } else if (Date.now() - Date.parse(sub.failing_since) >= DISABLE_AFTER_MS) {
    await repo.updateSubscription(conn, sub.account_id, sub.id, {
      enabled: false,
      disabled_reason: `Deliveries failed for 5 days (since ${sub.failing_since}); the last answer was ${result.status ?? result.error}`,
    });
    d.log.warn({ subscriptionId: sub.id }, 'webhook subscription disabled after 5 days of failures');
  }
}
