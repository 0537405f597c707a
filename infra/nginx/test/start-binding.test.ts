import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDatabase, dropDatabase, freePort, repoRoot, SERVICES } from '@app/devstack';

/**
 * Where `npm start`'s gateway listens: 127.0.0.1 unless GATEWAY_HOST says otherwise (the
 * containers' gateway listens on every interface of its container; see k8s.test.ts).
 */

/** An address of this machine other than loopback, if it has one. */
const outward = Object.values(networkInterfaces())
  .flat()
  .find((i) => i && !i.internal && i.family === 'IPv4')?.address;

const reachable = (host: string, port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, host);
    socket.setTimeout(2000, () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

interface Started {
  child: ChildProcess;
  port: number;
  /** Each service's own port (`MEETINGS_PORT`...). */
  ports: Record<string, string>;
  dataDir: string;
  stdout(): string;
  stderr(): string;
  exited: Promise<number | null>;
}

let databaseUrl: string;
const dbName = `start_binding_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
beforeAll(async () => {
  databaseUrl = await createDatabase(process.env.TEST_DATABASE_URL!, dbName);
});
afterAll(() => dropDatabase(process.env.TEST_DATABASE_URL!, dbName));

/** The devstack entry behind `npm start`, on free ports, a throwaway data directory and the test's Postgres and Redis. */
async function npmStart(env: Record<string, string>): Promise<Started> {
  const dataDir = mkdtempSync(join(tmpdir(), 'start-binding-'));
  const port = await freePort();
  const ports = Object.fromEntries(
    await Promise.all(SERVICES.map(async (svc) => [`${svc.toUpperCase()}_PORT`, String(await freePort())])),
  );
  const child = spawn(process.execPath, [join(repoRoot, 'packages', 'devstack', 'dist', 'start.js')], {
    cwd: repoRoot,
    env: {
      ...process.env,
      ...ports,
      DATA_DIR: dataDir,
      DATABASE_URL: databaseUrl,
      REDIS_URL: process.env.TEST_REDIS_URL!,
      GATEWAY_PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const deadline = Date.now() + 60000;
  while (!stdout.includes('Ctrl-C stops everything') && child.exitCode === null && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 50));
  return { child, port, ports, dataDir, stdout: () => stdout, stderr: () => stderr, exited };
}

async function stop(started: Started): Promise<void> {
  if (started.child.exitCode === null) started.child.kill('SIGINT');
  await started.exited;
  rmSync(started.dataDir, { recursive: true, force: true });
}

describe("npm start's gateway", () => {
  it('listens on 127.0.0.1 only by default', async () => {
    const started = await npmStart({});
    try {
      expect(started.stdout()).toContain('ready:');
      expect(await reachable('127.0.0.1', started.port)).toBe(true);
      if (outward) expect([outward, await reachable(outward, started.port)]).toEqual([outward, false]);
      else console.warn('no address but loopback on this machine: checked the rendered listen line and loopback only');
      expect(readFileSync(join(started.dataDir, 'nginx', 'gateway.conf'), 'utf8')).toContain(
        `listen 127.0.0.1:${started.port};`,
      );
    } finally {
      await stop(started);
    }
  }, 90000);

  it('listens on every interface with GATEWAY_HOST=0.0.0.0', async () => {
    const started = await npmStart({ GATEWAY_HOST: '0.0.0.0' });
    try {
      expect(started.stdout()).toContain('ready:');
      expect(readFileSync(join(started.dataDir, 'nginx', 'gateway.conf'), 'utf8')).toContain(
        `listen 0.0.0.0:${started.port};`,
      );
      expect(await reachable('127.0.0.1', started.port)).toBe(true);
      if (outward) expect(await reachable(outward, started.port)).toBe(true);
    } finally {
      await stop(started);
    }
  }, 90000);

  it('stops before starting anything when GATEWAY_HOST is not an address, naming the variable', async () => {
    const started = await npmStart({ GATEWAY_HOST: 'every interface' });
    try {
      expect(await started.exited).toBe(1);
      expect(started.stderr().trim()).toBe(
        'GATEWAY_HOST must be an IP address (127.0.0.1, 0.0.0.0, ::1) or localhost, got "every interface"',
      );
    } finally {
      await stop(started);
    }
  }, 90000);
});

describe("npm start's defaults", () => {
  /** A person signs up at a service through the gateway (npm start's sign-up is open): the session cookie. */
  async function signUp(origin: string, service: string): Promise<string> {
    const res = await fetch(`${origin}/auth/${service}/signup`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Origin: origin },
      body: JSON.stringify({ email: `start-${randomUUID()}@example.test`, password: 'a long enough password' }),
    });
    expect(res.status).toBe(201);
    return res.headers.get('set-cookie')!.split(';')[0]!;
  }

  it("lets meetings connect tasks on the loopback gateway (tasks fetches meetings' Client ID Metadata Document) and refuses any other loopback document", async () => {
    const started = await npmStart({});
    try {
      const origin = `http://127.0.0.1:${started.port}`;
      const cookie = `${await signUp(origin, 'meetings')}; ${await signUp(origin, 'tasks')}`;
      const start = await fetch(`${origin}/api/me/connections/tasks/start`, {
        redirect: 'manual',
        headers: { Cookie: cookie },
      });
      expect(start.status).toBe(302);
      // Without meetings' document in OAUTH_CIMD_TRUSTED this is tasks' 400 page: the document could not be fetched.
      const consent = await fetch(start.headers.get('location')!, { redirect: 'manual', headers: { Cookie: cookie } });
      const html = await consent.text();
      expect([consent.status, html.includes('could not be fetched')]).toEqual([200, false]);
      expect(html).toContain('Meetings');
      // Any other document on a loopback address stays refused (OAUTH_CIMD_ALLOW_PRIVATE is not set):
      // the same valid document from meetings' own port, which npm start does not list.
      const other = new URL(start.headers.get('location')!);
      other.searchParams.set(
        'client_id',
        `http://127.0.0.1:${started.ports.MEETINGS_PORT}/api/me/connections/tasks/client.json`,
      );
      const refused = await fetch(other, { redirect: 'manual', headers: { Cookie: cookie } });
      expect([refused.status, (await refused.text()).includes('could not be fetched')]).toEqual([400, true]);
    } finally {
      await stop(started);
    }
  }, 120000);
});
