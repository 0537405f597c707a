import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  copyFileSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SERVICES, freePort, repoRoot, systemPackages as system, type Service } from '@app/devstack';
import { homePath } from './stack.js';

/**
 * A newcomer's first `npm start` on a machine without nginx and redis-server: as a normal user it
 * stops at once with the exact command to run, and `npm start -- --no-gateway` starts without
 * the gateway and says which URLs serve instead. As root it installs them with apt-get, which
 * is checked here with the apt-get runner and the lookup stood in (installing for real is
 * .ci/run's job on a machine that lacks them).
 *
 * Hiding nginx honestly: Debian's nginx is /usr/sbin/nginx, which the lookup also tries after
 * PATH (a normal user's PATH lacks /usr/sbin). So the runs below get a PATH of their own, with
 * node, npm, sh and apt-get but no nginx and no redis-server, and NGINX_BIN naming a file that
 * does not exist: the documented override, after which nothing else is looked at.
 */
jest.setTimeout(120000);

const USER = 'ci-nonroot';
const isRoot = process.getuid?.() === 0;

/** A normal user to run as: this one when not root, else `ci-nonroot` (created as .ci/run does). */
function normalUser(): { uid: number; gid: number; name: string } | undefined {
  if (!isRoot) return { uid: process.getuid!(), gid: process.getgid!(), name: 'the current user' };
  const id = () => spawnSync('id', ['-u', USER], { encoding: 'utf8' });
  if (id().status !== 0) spawnSync('useradd', ['--create-home', '--shell', '/bin/bash', USER]);
  const uid = Number(id().stdout.trim());
  const gid = Number(spawnSync('id', ['-g', USER], { encoding: 'utf8' }).stdout.trim());
  return Number.isInteger(uid) && uid > 0 ? { uid, gid, name: USER } : undefined;
}

/** `cmd` run as the normal user (through runuser when root), with exactly `env`. */
function asUser(user: { name: string }, cmd: string[], env: Record<string, string>, cwd: string): ChildProcess {
  const vars = Object.entries(env).map(([k, v]) => `${k}=${v}`);
  return isRoot
    ? spawn('runuser', ['-u', user.name, '--', '/usr/bin/env', '-i', ...vars, ...cmd], {
        cwd,
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
      })
    : spawn(cmd[0]!, cmd.slice(1), { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
}

const user = normalUser();
let dir: string;
let bin: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'first-run-'));
  // The programs a bare machine has: node, npm, a shell, apt-get and coreutils; no nginx, no redis-server.
  bin = join(dir, 'bin');
  mkdirSync(bin);
  // (As root the embedded Postgres also runs id, useradd, cp and chmod to run as its own user.)
  for (const tool of ['node', 'npm', 'sh', 'apt-get', 'id', 'useradd', 'cp', 'chmod']) {
    const found = spawnSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).stdout.trim();
    if (found) symlinkSync(tool === 'node' ? process.execPath : found, join(bin, tool));
  }
  for (const hidden of ['nginx', 'redis-server'])
    expect(system.findExecutable(hidden, { PATH: bin, NGINX_BIN: join(dir, 'no-nginx') })).toBeUndefined();
  if (user) {
    chmodSync(dir, 0o755);
    chownSync(dir, user.uid, user.gid);
  }
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('npm start on a machine without nginx and redis-server, as a normal user', () => {
  it('stops at once, before installing anything, naming what is missing and the exact command to run', async () => {
    if (!user) {
      console.warn(`skipped: running as root and the user ${USER} could not be created with useradd`);
      return;
    }
    // A fresh clone as far as npm start's first step goes: no node_modules, nothing built.
    const clone = join(dir, 'clone');
    mkdirSync(join(clone, 'scripts'), { recursive: true });
    mkdirSync(join(clone, 'packages', 'devstack'), { recursive: true });
    // The system step reads the embedded Postgres's major from the devstack's package.json.
    for (const file of ['package.json', '.npmrc', 'packages/devstack/package.json'])
      copyFileSync(join(repoRoot, file), join(clone, file));
    cpSync(join(repoRoot, 'scripts'), join(clone, 'scripts'), { recursive: true });
    spawnSync('chown', ['-R', `${user.uid}:${user.gid}`, clone]);

    const startedAt = Date.now();
    const child = asUser(
      user,
      ['npm', 'start'],
      { PATH: bin, HOME: dir, NGINX_BIN: join(dir, 'no-nginx'), npm_config_update_notifier: 'false' },
      clone,
    );
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    const ms = Date.now() - startedAt;
    console.log(`npm start as ${user.name}, nginx and redis-server hidden: exit ${code} after ${ms} ms\n${stderr}`);

    expect(code).not.toBe(0);
    expect(stdout).toBe('');
    expect(stderr).toContain('npm start needs programs this machine lacks:');
    expect(stderr).toMatch(/^ {2}nginx {9}the gateway on :8080 .*NGINX_BIN=.* is not an executable file$/m);
    expect(stderr).toMatch(
      /^ {2}redis-server {2}rate limits .*not on PATH, nor in \/usr\/local\/sbin, \/usr\/sbin, \/sbin$/m,
    );
    expect(stderr).toContain('npm start does not install them: it is not running as root.');
    expect(stderr).toContain('Install them, then run it again:\n  sudo apt-get install -y nginx-light redis-server\n');
    expect(stderr).toContain(
      'Or start without the gateway, each service on its own port (without redis-server: single-instance mode):\n  npm start -- --no-gateway\n',
    );
    // At once: no dependency install, no build.
    expect(existsSync(join(clone, 'node_modules'))).toBe(false);
    expect(ms).toBeLessThan(15000);
  });

  it('starts with --no-gateway and says at the end of its ready block which URLs serve instead of the gateway', async () => {
    // The devstack entry that `npm start -- --no-gateway` runs once installed and built (the
    // system step lets --no-gateway through, see below), as the normal user when it can read
    // this checkout; .ci/run's root run is from a 0700 clone, where it runs as root instead.
    const readable =
      user &&
      (!isRoot ||
        spawnSync('runuser', [
          '-u',
          user.name,
          '--',
          'test',
          '-r',
          join(repoRoot, 'packages', 'devstack', 'dist', 'start.js'),
        ]).status === 0);
    const runAs = readable ? user : undefined;
    if (!runAs)
      console.warn(
        `--no-gateway runs as ${isRoot ? 'root' : 'the current user'}: ${user ? `${user.name} cannot read ${repoRoot}` : 'no normal user'}`,
      );
    const dataDir = join(dir, 'data');
    mkdirSync(dataDir);
    if (runAs && isRoot) chownSync(dataDir, runAs.uid, runAs.gid);
    const ports = {
      gateway: await freePort(),
      pg: await freePort(),
      ...(Object.fromEntries(await Promise.all(SERVICES.map(async (svc) => [svc, await freePort()]))) as Record<
        Service,
        number
      >),
    };
    const env: Record<string, string> = {
      PATH: bin,
      HOME: dir,
      NGINX_BIN: join(dir, 'no-nginx'),
      DATA_DIR: dataDir,
      ...Object.fromEntries(SERVICES.map((svc) => [`${svc.toUpperCase()}_PORT`, String(ports[svc])])),
      GATEWAY_PORT: String(ports.gateway),
      EMBEDDED_PG_PORT: String(ports.pg),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
    };
    const cmd = [process.execPath, join(repoRoot, 'packages', 'devstack', 'dist', 'start.js'), '--no-gateway'];
    const child = runAs
      ? asUser(runAs, cmd, env, repoRoot)
      : spawn(cmd[0]!, cmd.slice(1), { cwd: repoRoot, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    try {
      const last = "  (the README's http://localhost:";
      const deadline = Date.now() + 100000;
      while (!stdout.includes(last) && child.exitCode === null && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 50));
      console.log(
        `npm start -- --no-gateway as ${runAs?.name ?? 'root'}:\n${stdout}${stderr ? `\nstderr:\n${stderr}` : ''}`,
      );
      expect(stderr).not.toContain('needs programs');
      const ready = stdout.slice(stdout.indexOf('\nready:'));
      expect(ready).toContain('\n  gateway    none (--no-gateway)\n');
      expect(stdout).toContain('redis-server is not on PATH and REDIS_URL is unset: single-instance mode');
      // The last lines of the ready block: the gateway's port answers nothing, these do.
      expect(
        ready
          .trimEnd()
          .split('\n')
          .slice(-(SERVICES.length + 2)),
      ).toEqual([
        `no gateway (--no-gateway): nothing answers on http://localhost:${ports.gateway}; each service answers on its own port instead:`,
        ...SERVICES.map(
          (svc) =>
            `  ${svc.padEnd(10)} http://localhost:${ports[svc]}${homePath(svc)}  http://localhost:${ports[svc]}/docs/${svc}  http://localhost:${ports[svc]}/account/${svc}`,
        ),
        `  (the README's http://localhost:${ports.gateway}/... examples: use the service's port in their place)`,
      ]);
      expect(await refused(ports.gateway)).toBe(true);
      for (const svc of SERVICES)
        expect((await fetch(`http://127.0.0.1:${ports[svc]}${homePath(svc)}`)).status).toBe(401);
      // The account page works from the service's own origin: its sign-up is not refused as cross-origin.
      expect((await fetch(`http://127.0.0.1:${ports.tasks}/account/tasks`)).status).toBe(200);
      const signup = await fetch(`http://127.0.0.1:${ports.tasks}/auth/tasks/signup`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Origin: `http://localhost:${ports.tasks}` },
        body: JSON.stringify({ email: 'newcomer@example.test', password: 'a long enough password' }),
      });
      expect(signup.status).toBe(201);
    } finally {
      // Ctrl-C: SIGINT to start.js, which stops the services and Postgres in order.
      if (child.exitCode === null) {
        process.kill(-child.pid!, 'SIGINT');
        let timer: NodeJS.Timeout | undefined;
        const code = await Promise.race([
          exited,
          new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), 30000))),
        ]);
        clearTimeout(timer);
        if (code === 'timeout') process.kill(-child.pid!, 'SIGKILL');
        else expect(code).toBe(0);
      }
      // Under root the cluster lives outside DATA_DIR, behind the pg symlink: remove it too.
      const pgLink = join(dataDir, 'pg');
      if (lstatSync(pgLink, { throwIfNoEntry: false })?.isSymbolicLink())
        rmSync(readlinkSync(pgLink), { recursive: true, force: true });
    }
  });
});

const refused = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });

describe('the system step of npm start and npm test', () => {
  const absent = () => undefined;
  /** A machine where `present` are installed, and everything apt-get installs is found afterwards. */
  function machine(present: string[]) {
    const installed = new Set(present);
    const calls: Array<{ args: string[]; env: NodeJS.ProcessEnv }> = [];
    const output: string[] = [];
    return {
      calls,
      output,
      find: (cmd: string) => (installed.has(cmd) ? `/usr/bin/${cmd}` : undefined),
      run: (_cmd: string, args: string[], env: NodeJS.ProcessEnv) => {
        output.push(`(apt-get ${args[0]})`);
        calls.push({ args, env });
        if (args[0] === 'install')
          for (const [cmd, pkg] of [
            ['nginx', 'nginx-light'],
            ['redis-server', 'redis-server'],
            ['chromium', 'chromium'],
            ['postgresql-client', 'postgresql-client-15'],
          ])
            if (args.includes(pkg!)) installed.add(cmd!);
        return 0;
      },
      out: (text: string) => output.push(text),
      err: (text: string) => output.push(`stderr: ${text}`),
    };
  }

  it('as root with apt-get: says what it installs and why, then apt-get update and install, noninteractive, no recommends', () => {
    const m = machine(['apt-get']);
    const status = system.ensureSystemPackages('start', { env: { PATH: '/usr/bin' }, uid: 0, ...m });
    expect(status).toBe(0);
    expect(m.output[0]).toMatch(
      /^npm start needs programs this machine lacks; installing them once, as root, with apt-get \(NO_SYSTEM_INSTALL=1 turns this off\):\n {2}nginx-light {11}nginx: the gateway on :8080 .*\n {2}redis-server {10}redis-server: rate limits/,
    );
    expect(m.output[0]).toMatch(
      /\n {2}postgresql-client-15 {2}postgresql-client: pg_dump, pg_restore and psql of the embedded PostgreSQL's major \(15\): npm run admin -- <service> backup \| restore\n/,
    );
    expect(m.output.slice(1)).toEqual([
      '(apt-get update)',
      '(apt-get install)',
      'installed nginx-light redis-server postgresql-client-15\n',
    ]);
    expect(m.calls[1]!.args).toEqual([
      'install',
      '-q',
      '-o',
      'DPkg::Lock::Timeout=120',
      '-y',
      '--no-install-recommends',
      'nginx-light',
      'redis-server',
      'postgresql-client-15',
    ]);
    expect(m.calls.every((c) => c.env.DEBIAN_FRONTEND === 'noninteractive')).toBe(true);
  });

  it("npm test also installs chromium; REDIS_URL makes redis-server unnecessary, DATABASE_URL the embedded server's client tools; nothing to do when all are there", () => {
    const m = machine(['apt-get', 'redis-server']);
    expect(system.ensureSystemPackages('test', { env: {}, uid: 0, ...m })).toBe(0);
    expect(m.calls[1]!.args.slice(-3)).toEqual(['nginx-light', 'chromium', 'postgresql-client-15']);
    expect(m.output[0]).toContain(
      '(Debian also starts its own nginx on :80 as a system service; npm test runs instances of its own.)',
    );
    const env = { REDIS_URL: 'redis://x', DATABASE_URL: 'postgres://x' };
    expect(
      system.missingPrograms('start', {
        env,
        find: (cmd: string) => (cmd === 'nginx' ? '/usr/sbin/nginx' : undefined),
      }),
    ).toEqual([]);
    const again = machine(['apt-get', 'nginx', 'redis-server', 'chromium', 'postgresql-client']);
    expect(system.ensureSystemPackages('test', { env: {}, uid: 0, ...again })).toBe(0);
    expect(again.output).toEqual([]);
  });

  it('as root with NO_SYSTEM_INSTALL=1, or without apt-get: installs nothing and names the command', () => {
    const m = machine(['apt-get']);
    expect(system.ensureSystemPackages('start', { env: { NO_SYSTEM_INSTALL: '1' }, uid: 0, ...m })).toBe(1);
    expect(m.calls).toEqual([]);
    expect(m.output.join('')).toContain(
      'npm start does not install them: NO_SYSTEM_INSTALL=1 is set.\nInstall them, then run it again:\n  apt-get install -y nginx-light redis-server postgresql-client-15\n',
    );
    const noApt = machine([]);
    expect(system.ensureSystemPackages('test', { env: {}, uid: 1000, ...noApt })).toBe(1);
    expect(noApt.output.join('')).toContain(
      "npm test does not install them: this system has no apt-get.\nInstall nginx, redis-server, chromium and postgresql-client with this system's package manager (Debian, Ubuntu: sudo apt-get install -y nginx-light redis-server chromium postgresql-client-15), then run it again.\n",
    );
    expect(noApt.output.join('')).not.toContain('--no-gateway');
  });

  it('--no-gateway asks for nothing: npm start goes on without installing or stopping', () => {
    const m = machine(['apt-get']);
    expect(system.ensureSystemPackages('start', { args: ['--no-gateway'], env: {}, uid: 1000, ...m })).toBe(0);
    expect(
      system.ensureSystemPackages('start', {
        args: ['--no-gateway'],
        env: {},
        uid: 0,
        find: absent,
        run: m.run,
        out: m.out,
        err: m.err,
      }),
    ).toBe(0);
    expect(m.output).toEqual([]);
  });

  it('finds nginx in /usr/sbin when PATH lacks it, and only at NGINX_BIN when that is set', () => {
    const sbin = join(dir, 'sbin');
    mkdirSync(sbin, { recursive: true });
    writeFileSync(join(sbin, 'nginx'), '#!/bin/sh\n', { mode: 0o755 });
    expect(system.findExecutable('nginx', { PATH: bin }, [sbin])).toBe(join(sbin, 'nginx'));
    expect(system.findExecutable('nginx', { PATH: `${bin}:${sbin}` }, [])).toBe(join(sbin, 'nginx'));
    expect(system.findExecutable('nginx', { PATH: bin, NGINX_BIN: join(dir, 'no-nginx') }, [sbin])).toBeUndefined();
    expect(system.findExecutable('nginx', { PATH: '', NGINX_BIN: join(sbin, 'nginx') }, [])).toBe(join(sbin, 'nginx'));
    // A file that is not executable is not a program.
    writeFileSync(join(sbin, 'redis-server'), '', { mode: 0o644 });
    expect(system.findExecutable('redis-server', { PATH: sbin }, [])).toBeUndefined();
  });
});
