import { spawn } from 'node:child_process';
import { connect } from 'node:net';
import { freePort, pollUntil, serviceEntry, tcpDoor, waitForPort } from '@app/devstack';
import pg from 'pg';
import { startStack, type Stack } from './stack.js';

let stack: Stack;
const MEETINGS_SHUTDOWN_MS = 1500;
beforeAll(async () => {
  stack = await startStack({ meetings: { SHUTDOWN_TIMEOUT_MS: String(MEETINGS_SHUTDOWN_MS) } });
}, 60000);
afterAll(() => stack?.stop());

const refused = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });

describe('graceful shutdown on SIGTERM', () => {
  it('stops accepting, finishes the request in flight, then exits 0', async () => {
    const { accountId } = await stack.admin('tasks', 'create-account', '--email', 'drain@example.test');
    const { key } = await stack.admin('tasks', 'create-key', '--account', accountId);
    const headers = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' };
    const base = `http://127.0.0.1:${stack.ports.tasks}`;
    const created = await fetch(`${base}/api/v1/tasks`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ title: 'before' }),
    });
    const { item } = (await created.json()) as { item: { id: string } };

    // Hold the task's row lock so the PATCH below stays in flight.
    const blocker = new pg.Client({ connectionString: stack.databaseUrl });
    await blocker.connect();
    await blocker.query('begin');
    await blocker.query('select id from tasks.tasks where id = $1 for update', [item.id]);
    const inFlight = fetch(`${base}/api/v1/tasks/${item.id}`, {
      method: 'PATCH',
      headers,
      body: JSON.stringify({ title: 'during shutdown' }),
    });
    await new Promise((r) => setTimeout(r, 300));

    const service = stack.process('tasks');
    const exited = new Promise<number | null>((resolve) => service.once('exit', (code) => resolve(code)));
    service.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 300));
    expect(await refused(stack.ports.tasks)).toBe(true);
    expect(service.exitCode).toBeNull();

    await blocker.query('commit');
    await blocker.end();
    const res = await inFlight;
    expect(res.status).toBe(200);
    expect(((await res.json()) as { item: { title: string } }).item.title).toBe('during shutdown');
    expect(await exited).toBe(0);
  });
});

describe('shutdown deadline', () => {
  it('exits by SHUTDOWN_TIMEOUT_MS even while a query waits, instead of for the statement timeout', async () => {
    const { accountId } = await stack.admin('meetings', 'create-account', '--email', 'deadline@example.test');
    const { key } = await stack.admin('meetings', 'create-key', '--account', accountId);
    const headers = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' };
    const base = `http://127.0.0.1:${stack.ports.meetings}`;
    const person = (await (
      await fetch(`${base}/api/people`, { method: 'POST', headers, body: JSON.stringify({ name: 'Ada' }) })
    ).json()) as { id: string };

    const blocker = new pg.Client({ connectionString: stack.databaseUrl });
    await blocker.connect();
    await blocker.query('begin');
    await blocker.query('select id from meetings.people where id = $1 for update', [person.id]);
    const stuck = fetch(`${base}/api/people/${person.id}`, {
      method: 'PATCH',
      headers,
      body: JSON.stringify({ name: 'Ada L.' }),
    }).catch((err: unknown) => err);
    await new Promise((r) => setTimeout(r, 300));

    const service = stack.process('meetings');
    const exited = new Promise<number | null>((resolve) => service.once('exit', (code) => resolve(code)));
    const signalled = Date.now();
    service.kill('SIGTERM');
    const code = await exited;
    const took = Date.now() - signalled;
    await stuck;
    await blocker.query('rollback');
    await blocker.end();
    expect(code).toBe(1);
    expect(took).toBeGreaterThanOrEqual(MEETINGS_SHUTDOWN_MS - 100);
    expect(took).toBeLessThan(MEETINGS_SHUTDOWN_MS + 3000);
  });
});

describe('configuration validated at start', () => {
  const run = (service: string, env: Record<string, string>) =>
    new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, serviceEntry(service, 'serve'), {
        env: { PATH: process.env.PATH!, ...env },
      });
      let stderr = '';
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      child.once('exit', (code) => resolve({ code, stderr }));
    });

  it.each([
    ['tasks', { DATABASE_URL: 'postgres://x@127.0.0.1:1/x', TASKS_PORT: 'abc' }, 'TASKS_PORT'],
    [
      'meetings',
      { DATABASE_URL: 'postgres://x@127.0.0.1:1/x', RATE_LIMIT_READS_PER_MINUTE: '0' },
      'RATE_LIMIT_READS_PER_MINUTE',
    ],
    ['clipboard', { DATABASE_URL: 'mysql://x@127.0.0.1:1/x' }, 'DATABASE_URL'],
    ['tasks', {}, 'DATABASE_URL'],
    ['meetings', { DATABASE_URL: 'postgres://x@127.0.0.1:1/x', ALLOWED_ORIGINS: 'not a url' }, 'ALLOWED_ORIGINS'],
    ['clipboard', { DATABASE_URL: 'postgres://x@127.0.0.1:1/x', HEAP_GROWING_PERCENT: '-5' }, 'HEAP_GROWING_PERCENT'],
    ['tasks', { DATABASE_URL: 'postgres://x@127.0.0.1:1/x', SERVICE_ROLE: 'both' }, 'SERVICE_ROLE'],
    ['meetings', { DATABASE_URL: 'postgres://x@127.0.0.1:1/x', DATABASE_POOL_IDLE_MS: '30s' }, 'DATABASE_POOL_IDLE_MS'],
  ])('%s stops with one line naming the bad variable (%j)', async (service, env, variable) => {
    const { code, stderr } = await run(service, env);
    expect(code).not.toBe(0);
    const lines = stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(variable);
  });
});

describe('a service started before its database answers', () => {
  it('waits for it with one warning, then migrates and serves, without exiting', async () => {
    // Postgres refuses every connection (not up yet), then accepts them.
    const door = await tcpDoor(stack.databaseUrl, { open: false });
    const port = await freePort();
    const child = spawn(process.execPath, serviceEntry('clipboard', 'serve'), {
      env: { PATH: process.env.PATH!, DATABASE_URL: door.url, CLIPBOARD_PORT: String(port) },
    });
    let stdout = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    const warnings = () =>
      stdout.split('\n').filter((line) => line.includes('postgres is unavailable: waiting for it'));
    try {
      // A start on a loaded machine takes seconds before its first try; then two more, 0.5 s and 1 s apart.
      await pollUntil(
        async () => warnings().length,
        (n) => n > 0 || child.exitCode !== null,
        { timeoutMs: 60_000 },
      );
      const tried = await pollUntil(
        async () => door.connections,
        (n) => n >= 3,
        { timeoutMs: 10_000 },
      );
      expect(tried).toBeGreaterThanOrEqual(3);
      expect(child.exitCode).toBeNull();
      expect(await refused(port)).toBe(true);

      door.set({ open: true });
      await waitForPort(port, 60_000);
      const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
      expect(ready.status).toBe(200);
      expect(child.exitCode).toBeNull();
      expect(warnings()).toHaveLength(1);
    } finally {
      child.kill('SIGTERM');
      await new Promise((resolve) => (child.exitCode === null ? child.once('exit', resolve) : resolve(null)));
      await door.close();
    }
  }, 150_000);

  it('stops with one line when Postgres refuses its password: waiting would not change that', async () => {
    const wrong = new URL(stack.databaseUrl);
    wrong.password = 'not-the-password';
    const child = spawn(process.execPath, serviceEntry('clipboard', 'serve'), {
      env: { PATH: process.env.PATH!, DATABASE_URL: wrong.toString(), CLIPBOARD_PORT: String(await freePort()) },
    });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).toBe(1);
    const lines = stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('password authentication failed');
  }, 120_000);
});
