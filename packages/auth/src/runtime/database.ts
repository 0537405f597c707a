import { Kysely, Migrator, PostgresDialect, sql, type Migration } from 'kysely';
import pg from 'pg';

/** timestamptz as text (the session runs in UTC) -> ISO 8601 with `Z`, microseconds kept. */
export function pgTimestampToIso(text: string): string {
  // "2026-11-22 10:00:00.123456+00" -> "2026-11-22T10:00:00.123456Z"
  return text.replace(' ', 'T').replace(/\+00(?::00)?$/, 'Z');
}

const OID = { int8: 20, date: 1082, timestamptz: 1184 } as const;

/** Parsers that skip Date objects entirely: the API speaks strings, so rows go out as they come. */
function getTypeParser(oid: number, format?: 'text' | 'binary') {
  if (oid === OID.timestamptz) return pgTimestampToIso;
  if (oid === OID.date) return (text: string) => text;
  if (oid === OID.int8) return (text: string) => Number(text);
  return pg.types.getTypeParser(oid, format ?? 'text');
}

/** A pool whose sessions run in UTC with the service's schema first on the search_path. */
export function createPool(url: string, schema: string, max: number, onIdleError: (err: Error) => void = () => {}): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    max,
    options: `-c search_path=${schema},public -c TimeZone=UTC`,
    types: { getTypeParser } as pg.CustomTypesConfig,
    idleTimeoutMillis: 30_000,
  });
  // An idle connection dropped by the server (restart, failover) must not crash the process;
  // the pool replaces it on the next checkout and /readyz reports the database meanwhile.
  pool.on('error', onIdleError);
  return pool;
}

export function createDb<DB>(pool: pg.Pool): Kysely<DB> {
  return new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
}

/** Creates the schema if needed and applies every pending migration; throws on failure. */
export async function migrateToLatest(db: Kysely<any>, schema: string, migrations: Record<string, Migration>): Promise<void> {
  await sql`create schema if not exists ${sql.id(schema)}`.execute(db);
  const migrator = new Migrator({
    db,
    migrationTableSchema: schema,
    provider: { getMigrations: async () => migrations },
  });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) {
    throw new Error(`migration ${failed?.migrationName ?? ''} failed: ${String((error as Error | undefined)?.message ?? error)}`);
  }
}
