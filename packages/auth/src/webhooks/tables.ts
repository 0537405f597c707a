import { sql, type Kysely, type Migration } from 'kysely';

/** The schema graphile-worker keeps its jobs in, beside the service's own (`tasks_worker`, ...). */
export const workerSchema = (schema: string): string => `${schema}_worker`;

/**
 * `webhook_emit(account, type, event id, body[, traceparent])`: fans an event out to the account's
 * enabled subscriptions of that type, one outbox row each (with the write's trace context once
 * the traceparent migration has run).
 */
async function createEmit(db: Kysely<any>, traced: boolean, keptForReplay = false): Promise<void> {
  const param = traced ? sql`, p_traceparent text` : sql``;
  const column = traced ? sql`, traceparent` : sql``;
  const value = traced ? sql`, p_traceparent` : sql``;
  // Since replay: a disabled subscription gets its rows too, settled as skipped (sent only by a replay).
  const enabled = keptForReplay ? sql`` : sql`and enabled`;
  const state = keptForReplay ? sql`, state` : sql``;
  const stateValue = keptForReplay ? sql`, case when s.enabled then 'pending' else 'skipped' end` : sql``;
  await sql`
    create function webhook_emit(p_account uuid, p_type text, p_event_id text, p_body text${param}) returns int
    language plpgsql as $$
    declare
      s record;
      n int := 0;
    begin
      for s in
        select id, enabled from webhook_subscriptions
        where account_id = p_account ${enabled} and p_type = any(events)
      loop
        insert into webhook_deliveries (event_id, subscription_id, type, body${column}${state}) values (p_event_id, s.id, p_type, p_body${value}${stateValue});
        n := n + 1;
      end loop;
      return n;
    end $$`.execute(db);
}

/**
 * The webhook tables in the service's schema: subscriptions, the outbox of deliveries (one row
 * per event and subscription, written in the change's own transaction) and the attempts log.
 * `webhook_emit` writes only the outbox rows (the workers poll for them); `webhook_kick` queues
 * the graphile-worker job that drains one subscription (job_key: at most one waiting job each),
 * called by the worker and by a test ping, never by a change's write. plpgsql binds
 * `<schema>_worker.add_job` when it first runs it, after the worker installed it.
 */
function webhookMigration(schema: string): Migration {
  const worker = sql.id(workerSchema(schema));
  return {
    async up(db: Kysely<any>): Promise<void> {
      await sql`
        create table webhook_subscriptions (
          id uuid primary key default gen_random_uuid(),
          account_id uuid not null references accounts(id) on delete cascade,
          creator_key_id uuid,
          url text not null,
          events text[] not null,
          description text,
          enabled boolean not null default true,
          disabled_reason text,
          secret text not null,
          previous_secret text,
          previous_secret_expires_at timestamptz,
          failing_since timestamptz,
          created_at timestamptz not null default now(),
          updated_at timestamptz not null default now()
        )`.execute(db);
      await sql`create index webhook_subscriptions_account_idx on webhook_subscriptions (account_id, created_at)`.execute(
        db,
      );
      await sql`
        create table webhook_deliveries (
          seq bigint generated always as identity primary key,
          event_id text not null,
          -- No foreign key: every create would take a KEY SHARE lock on its subscription's row, and
          -- concurrent creates of one account would pile MultiXacts onto it. Deleting a
          -- subscription deletes its rows itself (repository.deleteSubscription).
          subscription_id uuid not null,
          type text not null,
          body text not null,
          state text not null default 'pending',
          attempts int not null default 0,
          next_attempt_at timestamptz not null default now(),
          created_at timestamptz not null default now()
        )`.execute(db);
      await sql`create index webhook_deliveries_pending_idx on webhook_deliveries (subscription_id, seq) where state = 'pending'`.execute(
        db,
      );
      await sql`create index webhook_deliveries_age_idx on webhook_deliveries (next_attempt_at) where state = 'pending'`.execute(
        db,
      );
      await sql`
        create table webhook_attempts (
          id bigint generated always as identity primary key,
          subscription_id uuid not null,
          event_id text not null,
          type text not null,
          attempt int not null,
          status_code int,
          ms int not null,
          error text,
          next_attempt_at timestamptz,
          created_at timestamptz not null default now()
        )`.execute(db);
      await sql`create index webhook_attempts_subscription_idx on webhook_attempts (subscription_id, id desc)`.execute(
        db,
      );
      await sql`create index webhook_attempts_created_idx on webhook_attempts (created_at)`.execute(db);
      // The one job per subscription that drains its outbox in order; a waiting job keeps its time.
      await sql`
        create function webhook_kick(p_subscription uuid, p_run_at timestamptz) returns void
        language plpgsql as $$
        begin
          perform ${worker}.add_job('webhook', json_build_object('s', p_subscription), run_at := p_run_at,
            job_key := 'webhook:' || p_subscription, job_key_mode := 'preserve_run_at');
        end $$`.execute(db);
      await createEmit(db, false);
    },
    async down(db: Kysely<any>): Promise<void> {
      await sql`drop function webhook_emit(uuid, text, text, text)`.execute(db);
      await sql`drop function webhook_kick(uuid, timestamptz)`.execute(db);
      await db.schema.dropTable('webhook_attempts').execute();
      await db.schema.dropTable('webhook_deliveries').execute();
      await db.schema.dropTable('webhook_subscriptions').execute();
    },
  };
}

/**
 * Each delivery keeps the trace context (W3C traceparent) of the write that emitted its event,
 * passed to `webhook_emit` in the write's own statement (null when tracing is off): the delivery
 * attempt's span links to that trace, in whichever process delivers it.
 */
const traceparentMigration: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await sql`alter table webhook_deliveries add column traceparent text`.execute(db);
    await sql`drop function webhook_emit(uuid, text, text, text)`.execute(db);
    await createEmit(db, true);
  },
  async down(db: Kysely<any>): Promise<void> {
    await sql`drop function webhook_emit(uuid, text, text, text, text)`.execute(db);
    await createEmit(db, false);
    await sql`alter table webhook_deliveries drop column traceparent`.execute(db);
  },
};

/**
 * Who changed a subscription last (created it, or since: PATCH, rotate-secret): deliveries are
 * filtered by that principal's scopes (DESIGN.md "Webhooks"). `changed_by_kind` is `key`,
 * `oauth` (a connected app: `changed_by_id` is its grant) or `session`; existing rows take their
 * creator. Null in a row a process from before this migration wrote meanwhile: its creator counts.
 */
const changedByMigration: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await sql`alter table webhook_subscriptions add column changed_by_kind text check (changed_by_kind in ('key', 'oauth', 'session')), add column changed_by_id uuid`.execute(
      db,
    );
    await sql`
      update webhook_subscriptions s set changed_by_id = creator_key_id, changed_by_kind = case
        when creator_key_id is null then 'session'
        when exists (select 1 from oauth_grants g where g.id = s.creator_key_id) then 'oauth'
        else 'key' end`.execute(db);
  },
  async down(db: Kysely<any>): Promise<void> {
    await sql`alter table webhook_subscriptions drop column changed_by_kind, drop column changed_by_id`.execute(db);
  },
};

/**
 * Replay (`POST /:id/replay`): every event of a subscription's types is kept for it 7 days, a
 * disabled one's too (recorded as skipped: sent only by a replay); `replayed_at` is when a replay
 * made a delivery pending again (its 24 h of retries count from then); the index finds a
 * subscription's events by number; `webhook_kick_now` queues its job to run now, also when a
 * waiting one was set for a later retry.
 */
function replayMigration(schema: string): Migration {
  const worker = sql.id(workerSchema(schema));
  return {
    async up(db: Kysely<any>): Promise<void> {
      await sql`alter table webhook_deliveries add column replayed_at timestamptz`.execute(db);
      await sql`create index webhook_deliveries_subscription_idx on webhook_deliveries (subscription_id, seq)`.execute(
        db,
      );
      await sql`drop function webhook_emit(uuid, text, text, text, text)`.execute(db);
      await createEmit(db, true, true);
      await sql`
        create function webhook_kick_now(p_subscription uuid) returns void
        language plpgsql as $$
        begin
          perform ${worker}.add_job('webhook', json_build_object('s', p_subscription),
            job_key := 'webhook:' || p_subscription, job_key_mode := 'replace');
        end $$`.execute(db);
    },
    async down(db: Kysely<any>): Promise<void> {
      await sql`drop function webhook_kick_now(uuid)`.execute(db);
      await sql`drop function webhook_emit(uuid, text, text, text, text)`.execute(db);
      await createEmit(db, true);
      await sql`drop index webhook_deliveries_subscription_idx`.execute(db);
      await sql`alter table webhook_deliveries drop column replayed_at`.execute(db);
    },
  };
}

/**
 * A subscription's `filter` (a service that filters its events, see WebhookFilter: tasks' filter
 * expressions), as the caller wrote it; null sends every event of its types.
 */
const filterMigration: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await sql`alter table webhook_subscriptions add column filter text`.execute(db);
  },
  async down(db: Kysely<any>): Promise<void> {
    await sql`alter table webhook_subscriptions drop column filter`.execute(db);
  },
};

/** The webhook migrations by name, to spread into a service's own set (after the auth tables). */
export function webhookMigrations(schema: string): Record<string, Migration> {
  return {
    '2026_11_23_2200_webhooks': webhookMigration(schema),
    '2026_11_25_0950_webhook_traceparent': traceparentMigration,
    '2026_11_28_1200_webhook_changed_by': changedByMigration,
    '2026_11_28_1500_webhook_replay': replayMigration(schema),
    '2026_11_28_1900_webhook_filter': filterMigration,
  };
}
