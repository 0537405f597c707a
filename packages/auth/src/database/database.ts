import {
  Kysely,
  Migrator,
  PostgresDialect,
  sql,
  type Migration,
  type PostgresPool,
  type PostgresPoolClient,
  type Transaction,
} from 'kysely';
import pg from 'pg';
import { DependencyUnavailableError } from '@app/http-errors';

/** timestamptz as text (the session runs in UTC) -> ISO 8601 with `Z`, microseconds kept. */
export function pgTimestampToIso(text: string): string {
  // "2026-11-22 10:00:00.123456+00" -> "2026-11-22T10:00:00.123456Z", by slicing (a four-digit
  // year, the usual case: it runs for every timestamp of every row); else by pattern.
  if (text.charCodeAt(10) === 32 && text.endsWith('+00')) return `${text.slice(0, 10)}T${text.slice(11, -3)}Z`;
  return text.replace(' ', 'T').replace(/\+00(?::00)?$/, 'Z');
}

/**
 * {@link pgTimestampToIso} in SQL, for a statement that writes a row's JSON itself (e.g. a webhook
 * event's data): the timestamptz column's text with `T` and `Z`, as the API writes it.
 */
export const isoTimestampSql = (column: string): string => `replace(replace(${column}::text, ' ', 'T'), '+00', 'Z')`;

/**
 * Any service's database: shared code (identity, webhooks, migrations runner) works on the tables
 * it owns inside a database whose full type only the service knows.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the service's own Database type cannot be named here
export type AnySchema = any;
export type AnyDb = Kysely<AnySchema>;

const OID = { int8: 20, date: 1082, timestamptz: 1184 } as const;

/** Parsers that skip Date objects entirely: the API speaks strings, so rows go out as they come. */
function getTypeParser(oid: number, format?: 'text' | 'binary') {
  if (oid === OID.timestamptz) return pgTimestampToIso;
  if (oid === OID.date) return (text: string) => text;
  if (oid === OID.int8) return (text: string) => Number(text);
  return pg.types.getTypeParser(oid, format ?? 'text') as (text: string) => unknown;
}

export interface PoolOptions {
  /** Longest wait for a connection (a new one, or a free one from a busy pool); then 503. */
  connectTimeoutMs?: number;
  /** Server-side limit on one statement (SQLSTATE 57014, a 503). */
  statementTimeoutMs?: number;
  /**
   * How long a connection may sit idle in the pool before it is closed (default 30 s; 0: never).
   * Closing one gives back what it grew (its read buffer keeps the size of the largest result).
   */
  idleTimeoutMs?: number;
  /** Called (at most once a second) when a connection breaks, idle or in use. */
  onConnectionError?: (err: Error) => void;
  /**
   * The sessions' application_name (default: the schema), so pg_stat_activity and the server log
   * tell a service's request connections from its background ones.
   */
  applicationName?: string;
  /**
   * A checkout Postgres turns away because it is starting up or shutting down asks again every
   * 100 ms until connectTimeoutMs has passed, instead of failing: for a pool that is not a
   * request's (see {@link PatientPool}).
   */
  waitOutRestarts?: boolean;
}

/**
 * A pool whose sessions run in UTC with the service's schema first on the search_path.
 *
 * No connection can crash the process: every client gets a permanent `error` listener when it
 * is created, so a connection the server drops while a request holds it (between two statements
 * of a transaction, say) is reported, not thrown as an unhandled `error` event.
 */
export function createPool(url: string, schema: string, max: number, options: PoolOptions = {}): pg.Pool {
  const pool = new (options.waitOutRestarts ? PatientPool : pg.Pool)({
    connectionString: url,
    max,
    application_name: options.applicationName ?? schema,
    options: `-c search_path=${schema},public -c TimeZone=UTC -c statement_timeout=${options.statementTimeoutMs ?? 30_000}`,
    types: { getTypeParser },
    idleTimeoutMillis: options.idleTimeoutMs ?? 30_000,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 1_500,
    // Dead peers are found by the kernel too, not only by the next query.
    keepAlive: true,
  });
  let lastReport = 0;
  const report = (err: Error) => {
    if (Date.now() - lastReport < 1000) return;
    lastReport = Date.now();
    options.onConnectionError?.(err);
  };
  pool.on('connect', (client) => {
    client.on('error', (err) => {
      broken.add(client);
      report(err);
    });
    client.on('end', () => broken.add(client));
  });
  // An idle connection dropped by the server (restart, failover): the pool has already removed
  // it and opens a new one on the next checkout; /readyz reports the database meanwhile.
  pool.on('error', report);
  return pool;
}

/** SQLSTATE cannot_connect_now: the server is starting up or shutting down. */
const CANNOT_CONNECT_NOW = '57P03';

/** pg's callback form of connect (its last overload). */
type ConnectCallback = Parameters<pg.Pool['connect']>[0];

/**
 * A pool that waits out Postgres' restart: a checkout answered with cannot_connect_now asks again
 * every 100 ms (within the connect timeout); a refused or broken connection still fails at once.
 * For the webhook queue: graphile-worker sleeps 1.5-4.5 s after that answer before it looks for
 * jobs again (its RETRYABLE_ERROR_CODES), so a look that caught Postgres restarting left reminders
 * and deliveries seconds late after Postgres was back (faults-reminders.test, 4.6 s).
 */
class PatientPool extends pg.Pool {
  override connect(): Promise<pg.PoolClient>;
  override connect(callback: ConnectCallback): void;
  override connect(callback?: ConnectCallback): Promise<pg.PoolClient> | void {
    const deadline = Date.now() + (this.options.connectionTimeoutMillis ?? 0);
    const attempt = async (): Promise<pg.PoolClient> => {
      for (;;) {
        try {
          return await super.connect();
        } catch (err) {
          if ((err as { code?: unknown }).code !== CANNOT_CONNECT_NOW || Date.now() >= deadline) throw err;
          await new Promise((r) => setTimeout(r, 100));
        }
      }
    };
    if (!callback) return attempt();
    attempt().then(
      (client) => callback(undefined, client, (release?: Error | boolean) => client.release(release)),
      (err: Error) => callback(err, undefined, () => {}),
    );
  }
}

/** Clients whose connection has failed or ended: never handed back to the pool. */
const broken = new WeakSet<pg.PoolClient>();

/** Server errors carry a five-character SQLSTATE; a client-side failure (lost socket) does not. */
const hasSqlState = (err: unknown): boolean =>
  typeof (err as { code?: unknown } | null)?.code === 'string' && /^[0-9A-Z]{5}$/.test((err as { code: string }).code);

/** Most distinct statements a process prepares; the rest run unnamed (parsed and planned each time). */
const MAX_PREPARED = 500;
const preparedNames = new Map<string, string>();

/**
 * Put first in a SELECT that writes through a function it calls (`select … from create_item(…)`),
 * which its text alone does not show: it then runs prepared like any other write.
 */
export const WRITES_THROUGH_FUNCTION = sql.raw('/* writes */ ');

/**
 * Put first in a read whose best plan does not depend on its parameters (it starts from one row
 * found by primary key, and reads what hangs off it by index): it then runs prepared like a write,
 * planned once per connection instead of on every call.
 */
export const PLANNED_ONCE = '/* planned once */ ';

/**
 * A data-modifying statement: it starts with one, or a WITH whose CTEs hold one (as a
 * one-statement create does), or it is marked {@link WRITES_THROUGH_FUNCTION}.
 */
const isWrite = (text: string): boolean =>
  text.startsWith('/* writes */') ||
  /^\s*(insert|update|delete)\b/i.test(text) ||
  (/^\s*with\b/i.test(text) && /\b(insert\s+into|delete\s+from)\b|\bupdate\s+\w+(\s+as)?(\s+\w+)?\s+set\b/i.test(text));

/** A statement that runs prepared: a write, or a read marked {@link PLANNED_ONCE}. */
const isPrepared = (text: string): boolean => isWrite(text) || text.startsWith(PLANNED_ONCE);

/**
 * Writes run as named prepared statements: each connection parses and plans one the first time
 * and then only binds and executes it, which is most of a one-row write's cost in Postgres.
 * Reads stay unnamed, so every one is planned for its own parameters (a generic plan could fit
 * one account's data badly), unless marked {@link PLANNED_ONCE}. Dynamic SQL (IN lists of any
 * length) cannot grow this past its bound.
 * `returning *` stays unnamed: a migration that adds a column while this process runs would make
 * its cached plan fail ("cached plan must not change result type") until a restart.
 */
function statementName(text: string): string | undefined {
  let name = preparedNames.get(text);
  if (name === undefined && preparedNames.size < MAX_PREPARED && isPrepared(text) && !/\breturning \*/i.test(text)) {
    name = `p${preparedNames.size}`;
    preparedNames.set(text, name);
  }
  return name;
}

/**
 * Whether a statement failed because its session ended: the server terminated it (57P01, 57P02,
 * class 08) or the socket broke (no SQLSTATE, and the client saw its connection fail or end).
 */
function sessionEnded(err: unknown, client: pg.PoolClient): boolean {
  if (!hasSqlState(err)) return broken.has(client);
  const { code } = err as { code: string };
  return code === '57P01' || code === '57P02' || code.startsWith('08');
}

/**
 * The pool as kysely sees it. A failure to connect, and a query that fails because its
 * connection broke, become {@link DependencyUnavailableError} (a 503 in every service); a client
 * whose connection broke is destroyed on release instead of going back to the pool.
 *
 * A checkout whose connection turns out dead at its first statement is replaced (as often as the
 * pool has idle connections that all ended at once), when that statement is not a write (a read,
 * or the `begin` of a transaction): Postgres ends a terminated or restarted session a moment after
 * the fact, and a request that checks out an idle connection in that moment would otherwise answer
 * 503 although the database is up. A write is never sent twice: whether it ran before its session
 * ended cannot be known.
 */
function resilient(pool: pg.Pool): PostgresPool {
  const checkout = async (): Promise<pg.PoolClient> => {
    try {
      return await pool.connect();
    } catch (err) {
      throw new DependencyUnavailableError('postgres', err);
    }
  };
  const run = (client: pg.PoolClient, text: string, values: unknown[]) =>
    client.query({ text, values, name: statementName(text) } as pg.QueryConfig);
  const unavailableIfBroken = (err: unknown, client: pg.PoolClient): unknown =>
    !hasSqlState(err) && broken.has(client) ? new DependencyUnavailableError('postgres', err) : err;
  return {
    async connect() {
      let client: pg.PoolClient | undefined = await checkout();
      let sent = false;
      const query = async (text: string, values: unknown[]) => {
        const first = !sent;
        sent = true;
        // Each dead connection is destroyed as it is found; the pool holds at most `max` of them.
        for (let replaced = 0; ; replaced++) {
          const current = client!;
          try {
            return await run(current, text, values);
          } catch (err) {
            const replace = first && !isWrite(text) && sessionEnded(err, current) && replaced < pool.options.max;
            if (!replace) throw unavailableIfBroken(err, current);
          }
          current.release(true);
          client = undefined;
          client = await checkout();
        }
      };
      return {
        // kysely only sends text and values (no cursors here).
        query: query as unknown as PostgresPoolClient['query'],
        release: () => client?.release(broken.has(client) ? true : undefined),
      };
    },
    end: () => pool.end(),
  };
}

/**
 * Runs `work` in one transaction, committed when it resolves and rolled back when it throws: the
 * one way every service opens a transaction. Postgres's default isolation (READ COMMITTED) and no
 * retry: the rules that need more take row locks inside `work`, and a serialization failure that
 * still happens is the error handler's 409 `concurrent_update`. Given a transaction, `work` runs
 * in it (a batch of commands runs each command's own writes in the batch's transaction).
 */
export function inTransaction<DB, T>(db: Kysely<DB>, work: (trx: Transaction<DB>) => Promise<T>): Promise<T> {
  if (db.isTransaction) return work(db as Transaction<DB>);
  return db.transaction().execute(work);
}

export function createDb<DB>(pool: pg.Pool): Kysely<DB> {
  return new Kysely<DB>({ dialect: new PostgresDialect({ pool: resilient(pool) }) });
}

/**
 * Held (a session advisory lock, database-wide) while a service changes its schema or installs
 * its webhook queue: kysely's Migrator reads the catalog of every schema before it takes its own
 * lock, and fails ("column ... does not exist") when another service's migration alters a table
 * at that moment, as three services starting together on a new database do.
 */
export const SCHEMA_CHANGE_LOCK = 727_210_021;

/** Where `migrate` takes the schema: the latest migration, a named one (up or down), or one step down. */
export type MigrationTarget = { latest: true } | { to: string } | { down: true };

/** What a migration run did: the migrations applied (up) and reverted (down), in order. */
export interface MigrationOutcome {
  applied: string[];
  reverted: string[];
}

/** Creates the schema if needed and applies every pending migration; throws on failure. */
export async function migrateToLatest(db: AnyDb, schema: string, migrations: Record<string, Migration>): Promise<void> {
  await migrateSchema(db, schema, migrations, { latest: true });
}

/**
 * Moves the schema to `target` under the schema-change lock (kysely's Migrator: `migrateToLatest`,
 * `migrateTo(name)` up or down, `migrateDown` one step); throws when a migration fails.
 */
export async function migrateSchema(
  db: AnyDb,
  schema: string,
  migrations: Record<string, Migration>,
  target: MigrationTarget,
): Promise<MigrationOutcome> {
  return db.connection().execute(async (conn) => {
    await sql`select pg_advisory_lock(${SCHEMA_CHANGE_LOCK})`.execute(conn);
    try {
      return await migrateUnlocked(db, schema, migrations, target);
    } finally {
      await sql`select pg_advisory_unlock(${SCHEMA_CHANGE_LOCK})`.execute(conn).catch(() => {});
    }
  });
}

const migratorOf = (db: AnyDb, schema: string, migrations: Record<string, Migration>) =>
  new Migrator({ db, migrationTableSchema: schema, provider: { getMigrations: async () => migrations } });

/** The migrations not yet applied to the schema, by name (all of them before the first run). */
export async function pendingMigrations(
  db: AnyDb,
  schema: string,
  migrations: Record<string, Migration>,
): Promise<string[]> {
  const infos = await migratorOf(db, schema, migrations).getMigrations();
  return infos.filter((m) => m.executedAt === undefined).map((m) => m.name);
}

async function migrateUnlocked(
  db: AnyDb,
  schema: string,
  migrations: Record<string, Migration>,
  target: MigrationTarget,
): Promise<MigrationOutcome> {
  await sql`create schema if not exists ${sql.id(schema)}`.execute(db);
  const migrator = migratorOf(db, schema, migrations);
  const { error, results } = await ('latest' in target
    ? migrator.migrateToLatest()
    : 'to' in target
      ? migrator.migrateTo(target.to)
      : migrator.migrateDown());
  // Postgres out of reach is not a failed migration: the caller may wait for it (a service's start).
  if (error instanceof DependencyUnavailableError) throw error;
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) {
    throw new Error(
      `migration ${failed?.migrationName ?? ''} failed: ${String((error as Error | undefined)?.message ?? error)}`,
    );
  }
  // kysely skips (NotExecuted) a migration without down() instead of failing.
  const skipped = results?.find((r) => r.status === 'NotExecuted');
  if (skipped) throw new Error(`migration ${skipped.migrationName} cannot be reverted (it has no down())`);
  const done = (direction: 'Up' | 'Down') =>
    (results ?? []).filter((r) => r.status === 'Success' && r.direction === direction).map((r) => r.migrationName);
  return { applied: done('Up'), reverted: done('Down') };
}
