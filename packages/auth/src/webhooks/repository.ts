import { CompiledQuery, sql } from 'kysely';
import { PLANNED_ONCE, inTransaction, type AnyDb } from '../database/database.js';

type Db = AnyDb;

export interface SubscriptionRow {
  id: string;
  account_id: string;
  creator_key_id: string | null;
  /** Who changed it last (see {@link ChangedBy}); null only in a row written by a process older than the column: its creator counts. */
  changed_by_kind: ChangedBy['changed_by_kind'] | null;
  changed_by_id: string | null;
  url: string;
  events: string[];
  description: string | null;
  /** The service's filter expression (WebhookFilter); null: every event of its types. */
  filter: string | null;
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

/**
 * The principal that created or last changed a subscription: deliveries are filtered by its
 * scopes. A key, a connected app (`oauth`: the id is its grant's) or a browser session (which
 * holds every scope; the id is the session's).
 */
export interface ChangedBy {
  changed_by_kind: 'key' | 'oauth' | 'session';
  changed_by_id: string;
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
  /** When a replay made it pending again (null: never); its retries count from then. */
  replayed_at: string | null;
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
  const row = await db
    .selectFrom('webhook_subscriptions')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function insertSubscription(
  db: Db,
  values: {
    id: string;
    account_id: string;
    creator_key_id: string | null;
    url: string;
    events: string[];
    description: string | null;
    filter: string | null;
    secret: string;
  } & ChangedBy,
): Promise<SubscriptionRow> {
  return db
    .insertInto('webhook_subscriptions')
    .values(values)
    .returningAll()
    .executeTakeFirstOrThrow() as Promise<SubscriptionRow>;
}

export async function listSubscriptions(db: Db, accountId: string): Promise<SubscriptionRow[]> {
  return db
    .selectFrom('webhook_subscriptions')
    .selectAll()
    .where('account_id', '=', accountId)
    .orderBy('created_at')
    .orderBy('id')
    .execute() as Promise<SubscriptionRow[]>;
}

/** The account's subscription (another account's is not found); `lock` holds it for an update. */
export async function findSubscription(
  db: Db,
  accountId: string,
  id: string,
  lock = false,
): Promise<SubscriptionRow | undefined> {
  let q = db.selectFrom('webhook_subscriptions').selectAll().where('account_id', '=', accountId).where('id', '=', id);
  if (lock) q = q.forUpdate();
  return q.executeTakeFirst() as Promise<SubscriptionRow | undefined>;
}

export async function updateSubscription(
  db: Db,
  accountId: string,
  id: string,
  changes: Record<string, unknown>,
): Promise<SubscriptionRow | undefined> {
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
  await db
    .updateTable('webhook_subscriptions')
    .set({ failing_since: since === null ? null : sql`now()` })
    .where('id', '=', id)
    .execute();
}

/** Deletes the account's subscription with its deliveries and attempts (they have no foreign key). */
export async function deleteSubscription(db: Db, accountId: string, id: string): Promise<boolean> {
  return inTransaction(db, async (trx) => {
    const r = await trx
      .deleteFrom('webhook_subscriptions')
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .executeTakeFirst();
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
export async function enqueueOne(
  db: Db,
  subscriptionId: string,
  eventId: string,
  type: string,
  body: string,
  traceparent: string | null,
): Promise<void> {
  await db
    .insertInto('webhook_deliveries')
    .values({ event_id: eventId, subscription_id: subscriptionId, type, body, traceparent })
    .execute();
  await kick(db, subscriptionId, null);
}

/** Makes sure the subscription has a job waiting (at `runAt`, or now; a waiting job keeps its time). */
export async function kick(db: Db, subscriptionId: string, runAt: Date | null): Promise<void> {
  await db.executeQuery(
    CompiledQuery.raw('select webhook_kick($1, coalesce($2::timestamptz, now()))', [
      subscriptionId,
      runAt?.toISOString() ?? null,
    ]),
  );
}

/** Events are kept this long for a replay (settled deliveries and attempts, then pruned). */
export const HISTORY_DAYS = 7;

/** Where a replay starts: after one of the subscription's events, or at a time. */
export type ReplayFrom = { afterEventId: string } | { at: string };

/**
 * Makes the subscription's events from `from` on (of the last {@link HISTORY_DAYS} days, pings
 * aside) pending again, due now, in their order, and queues its job to run now; the caller holds
 * the subscription's delivery lock, so none of them is being sent meanwhile. Their number, or
 * undefined when `from` is gone: an event id the subscription has no event of in those days
 * (never recorded, or pruned), or a time before them.
 */
export async function replayDeliveries(db: Db, subscriptionId: string, from: ReplayFrom): Promise<number | undefined> {
  const kept = sql<string>`now() - make_interval(days => ${HISTORY_DAYS})`;
  let after = sql`true`;
  if ('at' in from) {
    const { rows } = await sql<{ ok: boolean }>`select ${from.at}::timestamptz >= ${kept} as ok`.execute(db);
    if (!rows[0]?.ok) return undefined;
    after = sql`created_at >= ${from.at}::timestamptz`;
  } else {
    const { rows } = await sql<{ seq: number }>`select seq from webhook_deliveries
      where subscription_id = ${subscriptionId} and event_id = ${from.afterEventId} and created_at >= ${kept}`.execute(
      db,
    );
    if (!rows[0]) return undefined;
    after = sql`seq > ${rows[0].seq}`;
  }
  const r =
    await sql`update webhook_deliveries set state = 'pending', attempts = 0, next_attempt_at = now(), replayed_at = now()
    where subscription_id = ${subscriptionId} and ${after} and created_at >= ${kept} and type <> 'ping'`.execute(db);
  await sql`select webhook_kick_now(${subscriptionId}::uuid)`.execute(db);
  return Number(r.numAffectedRows ?? 0);
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

/** What the worker sends next for one subscription: the subscription, its last changer's scopes now, and its oldest pending deliveries. */
export interface DeliveryBatch {
  sub: SubscriptionRow;
  /**
   * The scopes the key or connected app (OAuth grant) that created or last changed the
   * subscription holds now (none once it ended); null when that was a browser session, which
   * holds every scope.
   */
  scopes: ReadonlySet<string> | null;
  /** The subscriber account's time zone (a filter's dates are its). */
  zone: string;
  /** In commit order (the head first); none while the subscription is disabled. */
  pending: DeliveryRow[];
}

const SUBSCRIPTION_COLUMNS = [
  'id',
  'account_id',
  'creator_key_id',
  'changed_by_kind',
  'changed_by_id',
  'url',
  'events',
  'description',
  'filter',
  'enabled',
  'disabled_reason',
  'secret',
  'previous_secret',
  'previous_secret_expires_at',
  'failing_since',
  'created_at',
  'updated_at',
] as const;
const DELIVERY_COLUMNS = [
  'seq',
  'event_id',
  'type',
  'body',
  'traceparent',
  'attempts',
  'next_attempt_at',
  'created_at',
  'replayed_at',
] as const;
// Every field of the rows the worker gets is read: a field added to SubscriptionRow or DeliveryRow
// and not to these lists fails to compile here, instead of arriving undefined.
type AllRead<Row, Listed> = [Exclude<keyof Row, Listed>] extends [never] ? true : never;
const everyColumnRead: [
  AllRead<SubscriptionRow, (typeof SUBSCRIPTION_COLUMNS)[number]>,
  AllRead<DeliveryRow, (typeof DELIVERY_COLUMNS)[number] | 'subscription_id'>,
] = [true, true];
void everyColumnRead;

// One row per pending delivery (in seq order) with the subscription's columns beside it, or one
// row of the subscription alone when nothing is pending: a batch is one round trip, not three.
// Planned once per connection: planning it had taken three times as long as running it (0.21 ms
// against 0.07 a call, pg_stat_statements with track_planning, 500 creates/s spread over 20
// subscriptions).
// Whoever changed the subscription last: a session (every scope), or an API key or, with an
// OAuth access token, its grant: the live one's scopes, none once it is revoked, disconnected or
// expired. A row with no changer recorded (written by an older process) is its creator's: a
// session's when it has no creator key.
const NEXT_BATCH = `${PLANNED_ONCE}select ${SUBSCRIPTION_COLUMNS.map((c) => `s.${c}`).join(', ')},
    case when coalesce(s.changed_by_kind, case when s.creator_key_id is null then 'session' end) = 'session' then null
      else coalesce(c.scopes, '{}') end as changer_scopes,
    a.timezone as account_timezone,
    ${DELIVERY_COLUMNS.map((c) => `d.${c} as d_${c}`).join(', ')}
  from webhook_subscriptions s
  join accounts a on a.id = s.account_id
  left join lateral (
    select scopes from api_keys where id = coalesce(s.changed_by_id, s.creator_key_id) and revoked_at is null
      and coalesce(s.changed_by_kind, 'key') = 'key'
    union all
    select scopes from oauth_grants where id = coalesce(s.changed_by_id, s.creator_key_id) and revoked_at is null and expires_at > now()
      and coalesce(s.changed_by_kind, 'oauth') = 'oauth'
    limit 1
  ) c on true
  left join lateral (
    select ${DELIVERY_COLUMNS.join(', ')} from webhook_deliveries
    where subscription_id = s.id and state = 'pending' and seq <> all($3::bigint[]) and s.enabled
    order by seq limit $2
  ) d on true
  where s.id = $1
  order by d.seq`;

type BatchRow = SubscriptionRow & { changer_scopes: string[] | null; account_timezone: string } & {
  [K in (typeof DELIVERY_COLUMNS)[number] as `d_${K}`]: DeliveryRow[K] | null;
};

/**
 * The subscription's next batch of at most `limit` deliveries, leaving out `sent` (sent and not
 * yet settled; not "after the last one sent": a write that commits after a later one's delivery
 * was sent has the lower number, and is next); undefined when the subscription is gone.
 */
export async function nextBatch(
  db: Db,
  subscriptionId: string,
  limit: number,
  sent: readonly number[] = [],
): Promise<DeliveryBatch | undefined> {
  const { rows } = await db.executeQuery<BatchRow>(CompiledQuery.raw(NEXT_BATCH, [subscriptionId, limit, sent]));
  const first = rows[0];
  if (!first) return undefined;
  const sub = Object.fromEntries(SUBSCRIPTION_COLUMNS.map((c) => [c, first[c]])) as unknown as SubscriptionRow;
  const pending = rows
    .filter((r) => r.d_seq !== null)
    .map((r): DeliveryRow => ({
      seq: r.d_seq!,
      event_id: r.d_event_id!,
      subscription_id: sub.id,
      type: r.d_type!,
      body: r.d_body!,
      traceparent: r.d_traceparent,
      attempts: r.d_attempts!,
      next_attempt_at: r.d_next_attempt_at!,
      created_at: r.d_created_at!,
      replayed_at: r.d_replayed_at,
    }));
  return {
    sub,
    scopes: first.changer_scopes === null ? null : new Set(first.changer_scopes),
    zone: first.account_timezone,
    pending,
  };
}

/** Settles deliveries the worker gives up on (a failed one counts its last attempt); a delivered batch is {@link settleDelivered}. */
export async function settleDeliveries(db: Db, seqs: number[], state: 'failed' | 'skipped'): Promise<void> {
  const attempts = state === 'skipped' ? sql`attempts` : sql`attempts + 1`;
  await sql`update webhook_deliveries set state = ${state}, attempts = ${attempts} where seq = any(${seqs}::bigint[])`.execute(
    db,
  );
}

/** Every pending delivery of the subscription, when it is disabled: an event is not sent later. */
export async function skipPending(db: Db, subscriptionId: string): Promise<number> {
  const r = await db
    .updateTable('webhook_deliveries')
    .set({ state: 'skipped' })
    .where('subscription_id', '=', subscriptionId)
    .where('state', '=', 'pending')
    .executeTakeFirst();
  return Number(r.numUpdatedRows);
}

export async function postponeDelivery(db: Db, seq: number, attempts: number, nextAttemptAt: Date): Promise<void> {
  await db
    .updateTable('webhook_deliveries')
    .set({ attempts, next_attempt_at: nextAttemptAt.toISOString() })
    .where('seq', '=', seq)
    .execute();
}

type NewAttempt = Omit<AttemptRow, 'created_at'> & { subscription_id: string };

/** The attempts as one array per column, for an INSERT ... SELECT FROM unnest (a batch is up to 100 rows). */
function attemptColumns(rows: NewAttempt[]) {
  const col = <K extends keyof NewAttempt>(k: K) => rows.map((r) => r[k]);
  return sql`select * from unnest(${col('subscription_id')}::uuid[], ${col('event_id')}::text[], ${col('type')}::text[], ${col('attempt')}::int[],
      ${col('status_code')}::int[], ${col('ms')}::int[], ${col('error')}::text[], ${col('next_attempt_at')}::timestamptz[])`;
}

const ATTEMPT_INTO = sql`insert into webhook_attempts (subscription_id, event_id, type, attempt, status_code, ms, error, next_attempt_at)`;

/** Logs attempts, in order, in one statement. */
export async function insertAttempts(db: Db, rows: NewAttempt[]): Promise<void> {
  if (rows.length === 0) return;
  await sql`${ATTEMPT_INTO} ${attemptColumns(rows)}`.execute(db);
}

/** Settles delivered deliveries (each counting its last attempt) and logs those attempts, in one statement. */
export async function settleDelivered(db: Db, seqs: number[], attempts: NewAttempt[]): Promise<void> {
  await sql`with settled as (update webhook_deliveries set state = 'delivered', attempts = attempts + 1 where seq = any(${seqs}::bigint[]))
    ${ATTEMPT_INTO} ${attemptColumns(attempts)}`.execute(db);
}

/** A delivery the wake-up loop sees: whose it is, and whether it still waits to be sent. */
export interface SeenDelivery {
  seq: number;
  subscription_id: string;
  pending: boolean;
}

// Two index range scans of the primary key. As one `seq > $1 or seq = any($2)` the planner could
// not use either as an index condition: it walked the whole key in order, filtering (EXPLAIN
// ANALYZE under the bench's load: 26 to 76 ms a look at 41,000 rows; these two: 0.1 ms).
const DELIVERIES_SINCE = `${PLANNED_ONCE}select seq, subscription_id, state = 'pending' as pending from (
    (select seq, subscription_id, state from webhook_deliveries where seq > $1 order by seq limit $3)
    union all
    select seq, subscription_id, state from webhook_deliveries where seq = any($2::bigint[])
  ) d order by seq`;

/**
 * The deliveries recorded after `afterSeq` (at most `limit` of them) and those of `gaps` (numbers
 * skipped last time: their writes had not committed, or rolled back), in order: a range of the
 * primary key's newest end, whatever history lies behind it.
 */
export async function deliveriesSince(
  db: Db,
  afterSeq: number,
  gaps: readonly number[],
  limit: number,
): Promise<SeenDelivery[]> {
  const { rows } = await db.executeQuery<SeenDelivery>(CompiledQuery.raw(DELIVERIES_SINCE, [afterSeq, gaps, limit]));
  return rows;
}

/** The newest delivery's number (0: none yet). */
export async function lastDeliverySeq(db: Db): Promise<number> {
  const { rows } = await sql<{ seq: number | null }>`select max(seq) as seq from webhook_deliveries`.execute(db);
  return rows[0]?.seq ?? 0;
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
  await sql`delete from webhook_deliveries where seq in (select seq from webhook_deliveries where state <> 'pending' and created_at < ${cutoff} order by seq limit 1000)`.execute(
    db,
  );
  await sql`delete from webhook_attempts where id in (select id from webhook_attempts where created_at < ${cutoff} limit 1000)`.execute(
    db,
  );
}

export type StoredSecrets = Pick<SubscriptionRow, 'id' | 'secret' | 'previous_secret' | 'previous_secret_expires_at'>;

/** A page of every account's subscriptions' stored secrets, in id order after `afterId`. */
export async function storedSecrets(db: Db, afterId: string | null, limit: number): Promise<StoredSecrets[]> {
  let q = db
    .selectFrom('webhook_subscriptions')
    .select(['id', 'secret', 'previous_secret', 'previous_secret_expires_at'])
    .orderBy('id')
    .limit(limit);
  if (afterId !== null) q = q.where('id', '>', afterId);
  return q.execute();
}

/**
 * Writes a row's re-sealed secrets if they are still what was read (a rotation in between wins,
 * and wrote its values under the current key anyway); whether it wrote them.
 */
export async function replaceSecrets(
  db: Db,
  read: StoredSecrets,
  secret: string,
  previousSecret: string | null,
): Promise<boolean> {
  const r = await db
    .updateTable('webhook_subscriptions')
    .set({ secret, previous_secret: previousSecret })
    .where('id', '=', read.id)
    .where('secret', '=', read.secret)
    .where(sql<boolean>`previous_secret is not distinct from ${read.previous_secret}`)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}
