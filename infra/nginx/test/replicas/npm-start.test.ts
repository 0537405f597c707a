import { spawn, type ChildProcess } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readlinkSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SERVICES, canListen, freePort, repoRoot, waitForPort, type Service } from '@app/devstack';
import { tally } from './metrics.js';

/**
 * `npm start -- --replicas 2` as a real process (the devstack entry that `npm start` runs after
 * installing and building), with its state in a throwaway DATA_DIR and neither DATABASE_URL nor
 * REDIS_URL, so it starts its own embedded Postgres and redis-server there: the supervisor, and
 * Ctrl-C stopping everything in order and leaving nothing behind.
 */
// Hundreds of requests and process starts per test: generous on a loaded machine.
jest.setTimeout(120000);

let dataDir: string;
let start: ChildProcess;
let stdout = '';
let stderr = '';
/** The first instance's port of each service (`<NAME>_PORT`), and the stack's own. */
const ports = {
  gateway: 0,
  redis: 0,
  postgres: 0,
  ...(Object.fromEntries(SERVICES.map((svc) => [svc, 0])) as Record<Service, number>),
};

/** A free port whose neighbour ten up (the second instance's) is free too. */
async function freeBase(): Promise<number> {
  for (;;) {
    const port = await freePort();
    if (port + 10 <= 65535 && (await canListen(port + 10))) return port;
  }
}

/** This process's descendants, from /proc. */
function descendants(pid: number): number[] {
  const parents = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parents.set(ppid, [...(parents.get(ppid) ?? []), Number(entry)]);
    } catch {
      // gone meanwhile
    }
  }
  const out: number[] = [];
  const walk = (p: number) => {
    for (const c of parents.get(p) ?? []) {
      out.push(c);
      walk(c);
    }
  };
  walk(pid);
  return out;
}

/** Alive and not a zombie waiting to be reaped. */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** A process's command line as `ps` shows it (nginx names its master and workers there). */
function command(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
  } catch {
    return '';
  }
}

/** The pid of the service instance listening on `port` (its *_PORT setting). */
function instancePid(service: string, port: number): number {
  for (const pid of descendants(start.pid!)) {
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      const environ = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
      if (
        cmdline.includes(join('apps', service, 'dist', 'service.js')) &&
        environ.includes(`${service.toUpperCase()}_PORT=${port}`)
      )
        return pid;
    } catch {
      // gone meanwhile
    }
  }
  throw new Error(`no ${service} process on port ${port}`);
}

async function until(what: string, check: () => boolean, timeoutMs: number): Promise<number> {
  const since = Date.now();
  while (!check()) {
    if (Date.now() - since > timeoutMs)
      throw new Error(
        `timed out waiting for ${what}\nstdout:\n${stdout.slice(-2000)}\nstderr:\n${stderr.slice(-2000)}`,
      );
    await new Promise((r) => setTimeout(r, 25));
  }
  return Date.now() - since;
}

beforeAll(async () => {
  // A 0700 folder, as a newcomer's clone may be: under root the Postgres data goes elsewhere.
  dataDir = mkdtempSync(join(tmpdir(), 'npm-start-'));
  ports.gateway = await freePort();
  ports.redis = await freePort();
  ports.postgres = await freePort();
  for (const svc of SERVICES) ports[svc] = await freeBase();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATA_DIR: dataDir,
    EMBEDDED_PG_PORT: String(ports.postgres),
    EMBEDDED_REDIS_PORT: String(ports.redis),
    GATEWAY_PORT: String(ports.gateway),
    ...Object.fromEntries(SERVICES.map((svc) => [`${svc.toUpperCase()}_PORT`, String(ports[svc])])),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
  };
  delete env.REDIS_URL;
  delete env.DATABASE_URL;
  // A process group of its own, as scripts/cli.mjs starts it: only it gets the Ctrl-C.
  start = spawn(process.execPath, [join(repoRoot, 'packages', 'devstack', 'dist', 'start.js'), '--replicas', '2'], {
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  start.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
  start.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  await until('npm start to be ready', () => stdout.includes('Ctrl-C stops everything'), 120000);
}, 150000);

afterAll(async () => {
  if (start?.exitCode === null) {
    // Its process group, and nginx's (a group of its own, see spawnNginx).
    for (const pid of [-start.pid!, ...descendants(start.pid!)]) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }
  // Under root the cluster lives outside DATA_DIR, behind the pg symlink: remove it too.
  const pgLink = join(dataDir, 'pg');
  if (lstatSync(pgLink, { throwIfNoEntry: false })?.isSymbolicLink())
    rmSync(readlinkSync(pgLink), { recursive: true, force: true });
  rmSync(dataDir, { recursive: true, force: true });
});

const gw = (path: string) => fetch(`http://127.0.0.1:${ports.gateway}${path}`);

describe('npm start -- --replicas 2', () => {
  it('runs two instances of each service on the port and the port + 10, sharing the redis-server it started under DATA_DIR', async () => {
    expect(stdout).toContain(`starting embedded Postgres (data in ${join(dataDir, 'pg')}) on port ${ports.postgres}`);
    expect(stdout).toContain(`starting redis-server (data in ${join(dataDir, 'redis')}) on port ${ports.redis}`);
    for (const svc of SERVICES) {
      expect(stdout).toContain(`http://localhost:${ports[svc]}  http://localhost:${ports[svc] + 10}`);
      for (const port of [ports[svc], ports[svc] + 10]) {
        const ready = (await (await fetch(`http://127.0.0.1:${port}/readyz`)).json()) as {
          checks: Record<string, string>;
        };
        expect(ready.checks).toEqual({ postgres: 'ok', redis: 'ok' });
      }
    }
    expect(existsSync(join(dataDir, 'runtime.json'))).toBe(true);
  });

  it('restarts a service instance killed with SIGKILL while the gateway and the others keep serving', async () => {
    const victim = instancePid('tasks', ports.tasks);
    const statuses: string[] = [];
    const killedAt = Date.now();
    process.kill(victim, 'SIGKILL');
    // Until it listens again, every family keeps answering through the gateway (401: served by
    // a live instance, not the gateway's 502).
    let back = false;
    const probe = (async () => {
      while (!back) {
        for (const path of ['/api/v1/tasks', '/api/me', '/api/clipboard']) {
          try {
            statuses.push(String((await gw(path)).status));
          } catch (err) {
            statuses.push(`network: ${(err as Error).message}`);
          }
        }
        // Paced under meetings' network cap (180 a minute per address, /api/me): a restart that
        // took 16.5 s on a busy machine, probed every 50 ms, met it.
        await new Promise((r) => setTimeout(r, 400));
      }
    })();
    await until(
      'the restart line',
      () => stderr.includes('tasks#1 exited (code null, signal SIGKILL); restarting in 1s'),
      10000,
    );
    // Its start is the machine's: 0.8 s of CPU alone, 16.5 s once while every suite ran on 2 cores.
    await until('tasks#1 to be back', () => stderr.includes('tasks#1 is back'), 60000);
    await waitForPort(ports.tasks, 5000);
    const restartMs = Date.now() - killedAt;
    back = true;
    await probe;
    console.log(
      `npm start: tasks#1 SIGKILLed, back in ${restartMs} ms; gateway answers meanwhile ${JSON.stringify(tally(statuses))}`,
    );
    expect(tally(statuses)).toEqual({ 401: statuses.length });
    expect(statuses.length).toBeGreaterThanOrEqual(3);
    expect(instancePid('tasks', ports.tasks)).not.toBe(victim);
  });

  it('also restarts an instance that was stopped with SIGTERM (exit 0), with the delay doubled', async () => {
    const pid = instancePid('tasks', ports.tasks);
    process.kill(pid, 'SIGTERM');
    await until(
      'the restart line',
      () => stderr.includes('tasks#1 exited (code 0, signal null); restarting in 2s'),
      15000,
    );
    await until('tasks#1 to be back again', () => stderr.split('tasks#1 is back').length === 3, 30000);
    expect((await gw('/api/v1/tasks')).status).toBe(401);
  });

  it('restarts the gateway when nginx dies (its orphaned workers go with it), and the gateway serves again', async () => {
    const nginx = (role: string) => descendants(start.pid!).filter((pid) => command(pid).startsWith(`nginx: ${role}`));
    const [master] = nginx('master');
    const workers = nginx('worker');
    expect(master).toBeDefined();
    expect(workers.length).toBeGreaterThan(0);
    const logged = stderr.length;
    process.kill(master!, 'SIGKILL');
    await until(
      'the gateway restart line',
      () => stderr.slice(logged).includes('gateway exited (code null, signal SIGKILL); restarting in 1s'),
      10000,
    );
    await until('the gateway to be back', () => stderr.slice(logged).includes('gateway is back'), 30000);
    expect((await gw('/api/v1/tasks')).status).toBe(401);
    expect(nginx('master')).not.toContain(master);
    expect(workers.filter(alive)).toEqual([]);
    expect(stderr.slice(logged)).not.toContain('could not bind');
  });

  it('stops everything on Ctrl-C and leaves no process behind', async () => {
    const pids = descendants(start.pid!);
    // 6 services, nginx (a master and its workers), redis-server, Postgres and its workers.
    expect(pids.length).toBeGreaterThanOrEqual(12);
    const logged = stdout.length + stderr.length;
    const exited = new Promise<number | null>((resolve) => start.once('exit', (code) => resolve(code)));
    const stoppingAt = Date.now();
    process.kill(start.pid!, 'SIGINT');
    expect(await exited).toBe(0);
    const stopMs = Date.now() - stoppingAt;
    await until('every child to be gone', () => pids.every((pid) => !alive(pid)), 5000);
    console.log(`npm start: Ctrl-C stopped ${pids.length} processes in ${stopMs} ms`);
    for (const port of [
      ports.gateway,
      ports.redis,
      ports.postgres,
      ...SERVICES.flatMap((svc) => [ports[svc], ports[svc] + 10]),
    ]) {
      expect(await canListen(port)).toBe(true);
    }
    expect(existsSync(join(dataDir, 'runtime.json'))).toBe(false);
    // In order: the services had drained and closed their pools before Postgres went away.
    const during = (stdout + stderr).slice(logged);
    expect(during).not.toMatch(/terminating connection|connection lost|ECONNREFUSED/);
    // Redis kept its data under DATA_DIR.
    expect(existsSync(join(dataDir, 'redis', 'dump.rdb'))).toBe(true);
  });
});

describe('npm start refuses bad replica settings with one line', () => {
  /** start.js run to its exit; bounded: one that goes on (past a check it should stop at) is killed. */
  const run = (args: string[], env: NodeJS.ProcessEnv) =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [join(repoRoot, 'packages', 'devstack', 'dist', 'start.js'), ...args], {
        env: { DATA_DIR: dataDir, ...env },
        detached: true,
      });
      let out = '';
      let err = '';
      child.stdout.on('data', (c: Buffer) => (out += c.toString()));
      child.stderr.on('data', (c: Buffer) => (err += c.toString()));
      const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 60000);
      child.once('exit', (code) => {
        clearTimeout(timer);
        resolve({ code, stdout: out, stderr: err });
      });
    });

  /** Settings for a run of start.js on free ports (`ports` override), with its data in `dir`. */
  const freshRun = async (dir: string, ports: Record<string, number> = {}): Promise<NodeJS.ProcessEnv> => {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      DATA_DIR: dir,
      HOST: '127.0.0.1',
      EMBEDDED_PG_PORT: String(await freePort()),
    };
    for (const name of ['GATEWAY_PORT', 'TASKS_PORT', 'MEETINGS_PORT', 'CLIPBOARD_PORT'])
      env[name] = String(ports[name] ?? (await freeBase()));
    delete env.DATABASE_URL;
    return env;
  };

  it.each([['9'], ['0'], ['two'], ['1.5']])('--replicas %s', async (n) => {
    const { code, stderr: err } = await run(['--replicas', n], { PATH: process.env.PATH });
    expect(code).toBe(2);
    expect(err.trim().split('\n')).toEqual([`--replicas must be a whole number from 1 to 8, got "${n}"`]);
  });

  it('stops before starting anything when a port it needs is taken, naming the port, its holder and the variable that moves it', async () => {
    // Another program on the gateway's port and on the second tasks instance's (TASKS_PORT + 10).
    const [gatewayPort, tasksPort] = [await freePort(), await freeBase()];
    const holders = await Promise.all(
      [gatewayPort, tasksPort + 10].map(
        (port) =>
          new Promise<Server>((resolve) => {
            const srv = createServer();
            srv.listen(port, '0.0.0.0', () => resolve(srv));
          }),
      ),
    );
    const own = mkdtempSync(join(tmpdir(), 'npm-start-taken-'));
    try {
      const {
        code,
        stdout: out,
        stderr: err,
      } = await run(['--replicas', '2'], await freshRun(own, { GATEWAY_PORT: gatewayPort, TASKS_PORT: tasksPort }));
      console.log(`npm start with ports ${gatewayPort} and ${tasksPort + 10} taken: exit ${code}\n${err}`);
      const here = `pid ${process.pid} (${readFileSync('/proc/self/comm', 'utf8').trim()}, in ${process.cwd()})`;
      expect(err.trim().split('\n')).toEqual([
        `port ${gatewayPort} is taken by ${here}: the gateway listens there; stop that program or set GATEWAY_PORT to a free port`,
        `port ${tasksPort + 10} is taken by ${here}: tasks instance 2 (TASKS_PORT + 10) listens there; stop that program or set TASKS_PORT to a free port`,
        'npm start stopped before starting anything.',
      ]);
      expect(code).toBe(1);
      expect(out).not.toContain('ready:');
      expect(existsSync(join(own, 'pg'))).toBe(false);
    } finally {
      for (const srv of holders) srv.close();
      rmSync(own, { recursive: true, force: true });
    }
  });

  it('says so, and stops, when .data/pg was made by another major of PostgreSQL (the embedded server was 17 before)', async () => {
    const own = mkdtempSync(join(tmpdir(), 'npm-start-pg17-'));
    try {
      mkdirSync(join(own, 'pg'));
      writeFileSync(join(own, 'pg', 'PG_VERSION'), '17\n');
      const { code, stderr: err } = await run([], await freshRun(own));
      expect(code).toBe(1);
      const pg = join(own, 'pg');
      expect(err).toContain(
        `start failed: the Postgres data in ${pg} was made by PostgreSQL 17, which this embedded PostgreSQL 15 cannot open. Move it aside to start afresh (mv ${pg} ${pg}-pg17)`,
      );
      expect(readFileSync(join(pg, 'PG_VERSION'), 'utf8')).toBe('17\n');
    } finally {
      rmSync(own, { recursive: true, force: true });
    }
  });

  it('--replicas 2 without Redis (no REDIS_URL, no redis-server on PATH)', async () => {
    // A PATH with the shell tools but without redis-server.
    const bin = mkdtempSync(join(tmpdir(), 'no-redis-'));
    try {
      for (const tool of ['sh', 'ls', 'head']) symlinkSync(`/usr/bin/${tool}`, join(bin, tool));
      const { code, stderr: err } = await run(['--replicas', '2'], { PATH: bin });
      expect(code).toBe(2);
      expect(err.trim().split('\n')).toEqual([
        '--replicas needs Redis (shared rate limits and idempotency records): install redis-server or set REDIS_URL',
      ]);
    } finally {
      rmSync(bin, { recursive: true, force: true });
    }
  });
});
