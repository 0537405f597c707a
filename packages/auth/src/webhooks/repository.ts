import { CompiledQuery, sql } from 'kysely';
import { inTransaction, type AnyDb } from '../database/database.js';

type Db = AnyDb;

export interface SubscriptionRow {
  id: string;
  account_id: string;
  creator_key_id: string | null;
  url: string;
  events: string[];
  description: string | null;
  enabled: boolean;
  disabled_reason: string | null;
  /** Sealed (secret-box.ts); `whsec_...` in a row written before encryption, until it is sealed. */
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: string | null;
  failing_since: string | null;
  created_at: string;
  updated_at: string;
}

export interface DeliveryRow {
  seq: number;
  event_id: string;
  subscription_id: string;
  type: string;
  body: string;
  /** The W3C trace context of the write that emitted the event (null: not traced). */
  traceparent: string | null;
  attempts: number;
  next_attempt_at: string;
  created_at: string;
}

export interface AttemptRow {
  event_id: string;
  type: string;
  attempt: number;
  status_code: number | null;
  ms: number;
  error: string | null;
  next_attempt_at: string | null;
  created_at: string;
}

export async function countSubscriptions(db: Db, accountId: string): Promise<number> {
  const row = await db.selectFrom('webhook_subscriptions').select((eb) => eb.fn.countAll<number>().as('n')).where('account_id', '=', accountId).executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function insertSubscription(
  db: Db,
  values: { id: string; account_id: string; creator_key_id: string | null; url: string; events: string[]; description: string | null; secret: string },
): Promise<SubscriptionRow> {
  return db.insertInto('webhook_subscriptions').values(values).returningAll().executeTakeFirstOrThrow() as Promise<SubscriptionRow>;
}

export async function listSubscriptions(db: Db, accountId: string): Promise<SubscriptionRow[]> {
  return db.selectFrom('webhook_subscriptions').selectAll().where('account_id', '=', accountId).orderBy('created_at').orderBy('id').execute() as Promise<SubscriptionRow[]>;
}

/** The account's subscription (another account's is not found); `lock` holds it for an update. */
export async function findSubscription(db: Db, accountId: string, id: string, lock = false): Promise<SubscriptionRow | undefined> {
  let q = db.selectFrom('webhook_subscriptions').selectAll().where('account_id', '=', accountId).where('id', '=', id);
  if (lock) q = q.forUpdate();
  return q.executeTakeFirst() as Promise<SubscriptionRow | undefined>;
}

/** Any subscription by id, for the delivery worker. */
export async function subscriptionById(db: Db, id: string): Promise<SubscriptionRow | undefined> {
  return db.selectFrom('webhook_subscriptions').selectAll().where('id', '=', id).executeTakeFirst() as Promise<SubscriptionRow | undefined>;
}

export async function updateSubscription(db: Db, accountId: string, id: string, changes: Record<string, unknown>): Promise<SubscriptionRow | undefined> {
  return db
    .updateTable('webhook_subscriptions')
    .set({ ...changes, updated_at: sql`now()` })
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst() as Promise<SubscriptionRow | undefined>;
}

/** When the subscription's deliveries started failing (null: they succeed); not a change of the subscription itself. */
export async function setFailingSince(db: Db, id: string, since: 'now' | null): Promise<void> {
  await db.updateTable('webhook_subscriptions').set({ failing_since: since === null ? null : sql`now()` }).where('id', '=', id).execute();
}

/** Deletes the account's subscription with its deliveries and attempts (they have no foreign key). */
export async function deleteSubscription(db: Db, accountId: string, id: string): Promise<boolean> {
  return inTransaction(db, async (trx) => {
    const r = await trx.deleteFrom('webhook_subscriptions').where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst();
    if (Number(r.numDeletedRows) === 0) return false;
    await forgetSubscription(trx, id);
    return true;
  });
}

/** The rows of a subscription that is gone (deleted, or its account deleted). */
export async function forgetSubscription(db: Db, id: string): Promise<void> {
  await db.deleteFrom('webhook_deliveries').where('subscription_id', '=', id).execute();
  await db.deleteFrom('webhook_attempts').where('subscription_id', '=', id).execute();
}

/** Writes one event for one subscription (the test ping) and its delivery job. */
export async function enqueueOne(db: Db, subscriptionId: string, eventId: string, type: string, body: string, traceparent: string | null): Promise<void> {
  await db.insertInto('webhook_deliveries').values({ event_id: eventId, subscription_id: subscriptionId, type, body, traceparent }).execute();
  await kick(db, subscriptionId, null);
}

/** Makes sure the subscription has a job waiting (at `runAt`, or now; a waiting job keeps its time). */
export async function kick(db: Db, subscriptionId: string, runAt: Date | null): Promise<void> {
  await db.executeQuery(CompiledQuery.raw('select webhook_kick($1, coalesce($2::timestamptz, now()))', [subscriptionId, runAt?.toISOString() ?? null]));
}

export async function listAttempts(db: Db, subscriptionId: string, limit: number): Promise<AttemptRow[]> {
  return db
    .selectFrom('webhook_attempts')
    .select(['event_id', 'type', 'attempt', 'status_code', 'ms', 'error', 'next_attempt_at', 'created_at'])
    .where('subscription_id', '=', subscriptionId)
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}

/** The subscription's oldest pending deliveries, in commit order (the head first). */
export async function pendingDeliveries(db: Db, subscriptionId: string, limit: number): Promise<DeliveryRow[]> {
  return db
    .selectFrom('webhook_deliveries')
    .select(['seq', 'event_id', 'subscription_id', 'type', 'body', 'traceparent', 'attempts', 'next_attempt_at', 'created_at'])
    .where('subscription_id', '=', subscriptionId)
    .where('state', '=', 'pending')
    .orderBy('seq')
    .limit(limit)
    .execute();
}

/** Settles deliveries; each delivered or failed one counts its last attempt. */
export async function settleDeliveries(db: Db, seqs: number[], state: 'delivered' | 'failed' | 'skipped'): Promise<void> {
  const attempts = state === 'skipped' ? sql`attempts` : sql`attempts + 1`;
  await sql`update webhook_deliveries set state = ${state}, attempts = ${attempts} where seq = any(${seqs}::bigint[])`.execute(db);
}

/** Every pending delivery of the subscription, when it is disabled: an event is not sent later. */
export async function skipPending(db: Db, subscriptionId: string): Promise<number> {
  const r = await db.updateTable('webhook_deliveries').set({ state: 'skipped' }).where('subscription_id', '=', subscriptionId).where('state', '=', 'pending').executeTakeFirst();
  return Number(r.numUpdatedRows);
}

export async function postponeDelivery(db: Db, seq: number, attempts: number, nextAttemptAt: Date): Promise<void> {
  await db.updateTable('webhook_deliveries').set({ attempts, next_attempt_at: nextAttemptAt.toISOString() }).where('seq', '=', seq).execute();
}

/** Logs attempts, in order, in one statement with one array per column (a batch is up to 100). */
export async function insertAttempts(db: Db, rows: Array<Omit<AttemptRow, 'created_at'> & { subscription_id: string }>): Promise<void> {
  if (rows.length === 0) return;
  const col = <K extends keyof (typeof rows)[number]>(k: K) => rows.map((r) => r[k]);
  await sql`
    insert into webhook_attempts (subscription_id, event_id, type, attempt, status_code, ms, error, next_attempt_at)
    select * from unnest(${col('subscription_id')}::uuid[], ${col('event_id')}::text[], ${col('type')}::text[], ${col('attempt')}::int[],
      ${col('status_code')}::int[], ${col('ms')}::int[], ${col('error')}::text[], ${col('next_attempt_at')}::timestamptz[])`.execute(db);
}

// The creator is an API key or, made with an OAuth access token, its grant (the credential id of
// either): the live one's scopes, none once it is revoked, disconnected or expired.
const CREATOR_SCOPES = `select scopes from api_keys where id = $1 and revoked_at is null
  union all
  select scopes from oauth_grants where id = $1 and revoked_at is null and expires_at > now()`;

/**
 * The scopes the key or connected app (OAuth grant) that created a subscription holds now (none
 * once it ended); null for one a browser session made, which holds every scope.
 */
export async function creatorScopes(db: Db, credentialId: string | null): Promise<ReadonlySet<string> | null> {
  if (credentialId === null) return null;
  const { rows } = await db.executeQuery<{ scopes: string[] }>(CompiledQuery.raw(CREATOR_SCOPES, [credentialId]));
  return new Set(rows[0]?.scopes ?? []);
}

/**
 * Subscriptions with a delivery due now, oldest due first, looking at no more than 5,000 due
 * deliveries (the partial index of pending ones), so a long backlog costs no more per look.
 */
export async function dueSubscriptions(db: Db): Promise<string[]> {
  const { rows } = await sql<{ id: string }>`
    select distinct subscription_id as id from (
      select subscription_id from webhook_deliveries
      where state = 'pending' and next_attempt_at <= now()
      order by next_attempt_at limit 5000
    ) due`.execute(db);
  return rows.map((r) => r.id);
}

/** Seconds since the oldest pending delivery became due (0 when none is). */
export async function queueAgeSeconds(db: Db): Promise<number> {
  const row = await db
    .selectFrom('webhook_deliveries')
    .select(sql<number>`coalesce(extract(epoch from now() - min(next_attempt_at)), 0)::float8`.as('age'))
    .where('state', '=', 'pending')
    .where('next_attempt_at', '<=', sql<string>`now()`)
    .executeTakeFirstOrThrow();
  return Number(row.age);
}

/** Drops settled deliveries and attempts older than `days` (a bounded batch). */
export async function pruneHistory(db: Db, days: number): Promise<void> {
  const cutoff = sql<string>`now() - make_interval(days => ${days})`;
  // Oldest first along the primary key (seq follows time), so no index of its own is needed.
  await sql`delete from webhook_deliveries where seq in (select seq from webhook_deliveries where state <> 'pending' and created_at < ${cutoff} order by seq limit 1000)`.execute(db);
  await sql`delete from webhook_attempts where id in (select id from webhook_attempts where created_at < ${cutoff} limit 1000)`.execute(db);
}

export type StoredSecrets = Pick<SubscriptionRow, 'id' | 'secret' | 'previous_secret' | 'previous_secret_expires_at'>;

/** A page of every account's subscriptions' stored secrets, in id order after `afterId`. */
export async function storedSecrets(db: Db, afterId: string | null, limit: number): Promise<StoredSecrets[]> {
  let q = db.selectFrom('webhook_subscriptions').select(['id', 'secret', 'previous_secret', 'previous_secret_expires_at']).orderBy('id').limit(limit);
  if (afterId !== null) q = q.where('id', '>', afterId);
  return q.execute();
}

/**
 * Writes a row's re-sealed secrets if they are still what was read (a rotation in between wins,
 * and wrote its values under the current key anyway); whether it wrote them.
 */
export async function replaceSecrets(db: Db, read: StoredSecrets, secret: string, previousSecret: string | null): Promise<boolean> {
  const r = await db
    .updateTable('webhook_subscriptions')
    .set({ secret, previous_secret: previousSecret })
    .where('id', '=', read.id)
    .where('secret', '=', read.secret)
    .where(sql<boolean>`previous_secret is not distinct from ${read.previous_secret}`)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}
