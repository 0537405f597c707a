import { sql, type Migration } from 'kysely';
import type { AnyDb } from '../identity/repository.js';

/** The Postgres channel a service's stream notifications travel on (one database holds the three schemas). */
export const streamChannel = (service: string): string => `${service}_streams`;

/**
 * A revoked key, session or OAuth grant (disconnected app) is announced on the service's stream
 * channel as `r:<id>` when the revoking transaction commits, so every replica ends that
 * credential's streams at once without any stream asking the database.
 */
function revocationMigration(service: string): Migration {
  const channel = streamChannel(service);
  return {
    async up(db: AnyDb): Promise<void> {
      await sql`
        create function stream_revoked() returns trigger language plpgsql as $$
        begin
          perform pg_notify(${sql.lit(channel)}, 'r:' || new.id::text);
          return null;
        end $$`.execute(db);
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

/** The streams' migrations of a service's schema, by name (after the identity and OAuth tables). */
export function streamMigrations(service: string): Record<string, Migration> {
  return { '2026_11_25_0600_stream_revocations': revocationMigration(service) };
}
