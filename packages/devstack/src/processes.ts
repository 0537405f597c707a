import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, waitForPort } from './ports.js';

/**
 * The system-program lookup and the missing-program messages, shared with scripts/cli.mjs: that
 * runs before anything is installed or built, so the one copy is plain Node there (this file is
 * packages/devstack/{src,dist}/, three levels below the repository root).
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports -- plain CommonJS outside every tsconfig (cli.mjs runs it before anything is built); SystemPackages types it
export const systemPackages = require('../../../scripts/system-packages.cjs') as SystemPackages;

/** A program npm start or npm test needs and this machine lacks. */
interface MissingProgram {
  cmd: string;
  package: string;
  why: string;
}

/** scripts/system-packages.cjs, as its JSDoc describes it. */
export interface SystemPackages {
  findExecutable(cmd: string, env?: NodeJS.ProcessEnv, sbinDirs?: readonly string[]): string | undefined;
  missingPrograms(
    command: string,
    opts?: {
      args?: readonly string[];
      env?: NodeJS.ProcessEnv;
      find?: (cmd: string, env: NodeJS.ProcessEnv) => string | undefined;
    },
  ): MissingProgram[];
  stopMessage(
    command: string,
    missing: MissingProgram[],
    how: { reason: string; root: boolean; aptGet: boolean },
  ): string;
  ensureSystemPackages(
    command: string,
    opts?: {
      args?: readonly string[];
      env?: NodeJS.ProcessEnv;
      uid?: number;
      find?: (cmd: string, env: NodeJS.ProcessEnv) => string | undefined;
      run?: (cmd: string, args: string[], env: NodeJS.ProcessEnv) => number;
      out?: (text: string) => void;
      err?: (text: string) => void;
    },
  ): number;
  NO_GATEWAY: string;
  SBIN_DIRS: readonly string[];
}

/**
 * The file `cmd` runs, or undefined: NGINX_BIN / REDIS_SERVER_BIN / CHROMIUM_PATH when set (and
 * nothing else then), else PATH, then /usr/local/sbin, /usr/sbin, /sbin (Debian's nginx is
 * /usr/sbin/nginx, off a normal user's PATH).
 */
export function findExecutable(cmd: string): string | undefined {
  return systemPackages.findExecutable(cmd, process.env);
}

/** A running process's resident set size in MB (Linux /proc; throws once the process is gone). */
export function rssMb(pid: number): number {
  return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
}

/** Stops a child: SIGTERM, then SIGKILL after `graceMs`. */
export function stopChild(child: ChildProcess, graceMs = 5000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

export interface RunningRedis {
  url: string;
  port: number;
  stop(): Promise<void>;
  /** Sends `signal` and waits for the exit, keeping its folder (a fault test's crash). */
  kill(signal: NodeJS.Signals): Promise<void>;
}

export interface RedisOptions {
  /** Keep the data here (snapshots, saved on shutdown); a throwaway temporary folder when left out. */
  dataDir?: string;
  /** A free port when left out. */
  port?: number;
}

/** Starts a `redis-server` from PATH on 127.0.0.1, throwaway unless `dataDir` is given. */
export async function startRedis(opts: RedisOptions = {}): Promise<RunningRedis> {
  const bin = findExecutable('redis-server');
  if (!bin)
    throw new Error('redis-server is not on PATH: install it (apt-get install -y redis-server) or set REDIS_URL');
  const port = opts.port ?? (await freePort());
  const dir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'redis-'));
  mkdirSync(dir, { recursive: true });
  // Kept data: a snapshot every 5 minutes when anything changed, and one on shutdown.
  const persistence = opts.dataDir ? ['--save', '300 1', '--dbfilename', 'dump.rdb'] : ['--save', ''];
  const child = spawn(
    bin,
    ['--port', String(port), '--bind', '127.0.0.1', ...persistence, '--appendonly', 'no', '--dir', dir],
    {
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', (code) => reject(new Error(`redis-server exited with code ${code} while starting`))),
  );
  exited.catch(() => {});
  await Promise.race([waitForPort(port), exited]);
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    kill: (signal) =>
      child.exitCode !== null || child.signalCode !== null
        ? Promise.resolve()
        : new Promise((done) => {
            child.once('exit', () => done());
            child.kill(signal);
          }),
    stop: async () => {
      await stopChild(child);
      if (!opts.dataDir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Writes a stream's output line by line behind `[name] `. A read may end in the middle of a line
 * (a long JSON log line often does): that part waits for the rest instead of printing as two
 * broken lines; whatever is left when the stream ends is printed as the last line.
 */
function prefixLines(name: string, from: NodeJS.ReadableStream, out: NodeJS.WriteStream): void {
  let partial = '';
  from.setEncoding('utf8');
  from.on('data', (chunk: string) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop()!;
    for (const line of lines) if (line) out.write(`[${name}] ${line}\n`);
  });
  from.on('end', () => {
    if (partial) out.write(`[${name}] ${partial}\n`);
    partial = '';
  });
}

/**
 * Spawns a long-running child, its output prefixed line by line. Its open-file limit is raised to
 * the hard limit where the shell may (an open change stream is an open file, and a soft limit of
 * 1,024 is common): `exec` keeps the pid the child's.
 */
export function spawnService(name: string, command: string, args: string[], options: SpawnOptions): ChildProcess {
  const raise = 'ulimit -n "$(ulimit -Hn)" 2>/dev/null; exec "$0" "$@"';
  const child = spawn('/bin/sh', ['-c', raise, command, ...args], { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
  if (child.stdout) prefixLines(name, child.stdout, process.stdout);
  if (child.stderr) prefixLines(name, child.stderr, process.stderr);
  return child;
}
