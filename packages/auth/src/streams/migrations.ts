import { sql, type Migration, type RawBuilder } from 'kysely';
import type { AnyDb } from '../identity/repository.js';

/** The Postgres channel a service's stream notifications travel on (one database holds the three schemas). */
export const streamChannel = (service: string): string => `${service}_streams`;

/** A trigger function announcing the revoked row as `r:<id>` on `channel` (`id`: an expression of `new`). */
const revokedAnnouncer = (name: string, channel: string, id: RawBuilder<string>) => sql`
  create function ${sql.id(name)}() returns trigger language plpgsql as $$
  begin
    perform pg_notify(${sql.lit(channel)}, 'r:' || ${id});
    return null;
  end $$`;

/**
 * A revoked key, session or OAuth grant (disconnected app) is announced on the service's stream
 * channel as `r:<id>` when the revoking transaction commits, so every replica ends that
 * credential's streams at once without any stream asking the database.
 */
function revocationMigration(service: string): Migration {
  const channel = streamChannel(service);
  return {
    async up(db: AnyDb): Promise<void> {
      await revokedAnnouncer('stream_revoked', channel, sql`new.id::text`).execute(db);
      for (const table of ['api_keys', 'sessions', 'oauth_grants']) {
        await sql`
          create trigger ${sql.id(`${table}_stream_revoked`)} after update of revoked_at on ${sql.id(table)}
          for each row when (old.revoked_at is null and new.revoked_at is not null)
          execute function stream_revoked()`.execute(db);
      }
    },
    async down(db: AnyDb): Promise<void> {
      for (const table of ['api_keys', 'sessions', 'oauth_grants']) {
        await sql`drop trigger ${sql.id(`${table}_stream_revoked`)} on ${sql.id(table)}`.execute(db);
      }
      await sql`drop function stream_revoked()`.execute(db);
    },
  };
}

/**
 * An OAuth access token revoked on its own (RFC 7009) is announced as `r:<its hash in hex>` (the
 * id its streams are listed under): its grant lives on, so the grant's announcement never comes.
 */
function tokenRevocationMigration(service: string): Migration {
  const channel = streamChannel(service);
  return {
    async up(db: AnyDb): Promise<void> {
      await revokedAnnouncer('stream_token_revoked', channel, sql`encode(new.token_hash, 'hex')`).execute(db);
      await sql`
        create trigger oauth_tokens_stream_revoked after update of revoked_at on oauth_tokens
        for each row when (old.revoked_at is null and new.revoked_at is not null and new.kind = 'access')
        execute function stream_token_revoked()`.execute(db);
    },
    async down(db: AnyDb): Promise<void> {
      await sql`drop trigger oauth_tokens_stream_revoked on oauth_tokens`.execute(db);
      await sql`drop function stream_token_revoked()`.execute(db);
    },
  };
}

/**
 * Announcing only what somebody streams. Postgres serializes the commits of every transaction that
 * sent a NOTIFY (one lock on the notification queue, held through the commit's WAL flush), so a
 * notice per write capped the whole database's write throughput (`node bench/dist/notify-cost.js`:
 * 50 connections inserting one row each, durable commits, 15-20k commits/s without a notice and
 * 4.2-4.5k with one, on the 2-core development machine).
 *
 * A process with open streams holds a row per streamed key (account or workspace) in
 * `stream_watches`, with a lease it renews; `stream_announce(key, position)` (called by the feed's
 * triggers, after they hold their transaction id) sends `c:<key>:<position>` only while such a
 * row is live. A write that looked before the row committed is one the registering stream waits
 * out (see the hub's `watch`), so none is missed.
 */
function watchMigration(service: string): Migration {
  const channel = streamChannel(service);
  return {
    async up(db: AnyDb): Promise<void> {
      const watches = sql.id(await currentSchema(db), 'stream_watches');
      await sql`
        create table ${watches} (
          key uuid not null,
          holder uuid not null,
          expires_at timestamptz not null,
          primary key (key, holder)
        )`.execute(db);
      await sql`
        create function stream_announce(p_key uuid, p_position text) returns void language plpgsql as $$
        begin
          if exists (select 1 from ${watches} w where w.key = p_key and w.expires_at > now()) then
            perform pg_notify(${sql.lit(channel)}, 'c:' || p_key::text || ':' || p_position);
          end if;
        end $$`.execute(db);
    },
    async down(db: AnyDb): Promise<void> {
      await sql`drop function stream_announce(uuid, text)`.execute(db);
      await sql`drop table stream_watches`.execute(db);
    },
  };
}

/**
 * Announces `ref`, an event that is no change of the feed (tasks' `reminder.fired`), to the open
 * streams of `key` on every replica as `e:<key>:<ref>` when `trx` commits; each stream reads it
 * with its feed's `event(ref)` and sends it. Nothing is sent while no stream watches `key`. `trx`
 * is a connection of the service (its schema on the search_path).
 */
export async function announceStreamEvent(trx: AnyDb, service: string, key: string, ref: string): Promise<void> {
  await sql`
    select pg_notify(${streamChannel(service)}, 'e:' || ${key}::text || ':' || ${ref}::text)
    where exists (select 1 from stream_watches w where w.key = ${key}::uuid and w.expires_at > now())`.execute(trx);
}

async function currentSchema(db: AnyDb): Promise<string> {
  const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(db);
  return rows[0]!.schema;
}

/**
 * `<schema>.stream_announce`, in the schema the migration runs in: a feed trigger fires in any
 * session (an operator's psql, a restore, a seeding script), whatever its search_path.
 */
export async function streamAnnounceFunction(db: AnyDb): Promise<RawBuilder<unknown>> {
  return sql.id(await currentSchema(db), 'stream_announce');
}

/**
 * The streams' migrations of a service's schema, by name (after the identity and OAuth tables).
 * The service's own feed triggers call `stream_announce` from a later migration of its own.
 */
export function streamMigrations(service: string): Record<string, Migration> {
  return {
    '2026_11_25_0600_stream_revocations': revocationMigration(service),
    '2026_11_26_0700_stream_watches': watchMigration(service),
    '2026_11_27_0900_stream_revoked_tokens': tokenRevocationMigration(service),
  };
}
