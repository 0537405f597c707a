import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import {
  adminCommand,
  freePort,
  startEmbeddedPostgres,
  startProduct,
  startRedis,
  waitForPort,
  type RunningPostgres,
  type RunningProduct,
  type RunningRedis,
  type Service,
} from '@app/devstack';
import { findLostWrites, printTable, runLoad, summarize, type Target } from './faults/load.js';
import { SERVICES, allLimitsAt } from './stack.js';

/**
 * The fault suite (`npm run test:faults`, also part of `npm test`): the three built services as
 * real processes behind real nginx, on a Postgres and a redis-server of its own, which it stops,
 * kills and restarts under load. Each phase prints what the clients saw and re-reads every write
 * that was acknowledged.
 */
jest.setTimeout(180_000);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('faults under load through the gateway', () => {
  let pgServer: RunningPostgres;
  let pgDir: string;
  /** Every redis-server started on the suite's port: killed ones are restarted as new ones (empty). */
  const redisServers: RunningRedis[] = [];
  let product: RunningProduct;
  let nginxDir: string;
  let gateway: string;
  const auth = {} as Record<Service, string>;
  const rows: Array<Record<string, string | number>> = [];
  const supervisorLog: string[] = [];

  const admin = (service: Service, ...argv: string[]) => adminCommand(service, pgServer.url, ...argv);
  /** Each service's process and restarts: unchanged across a phase means nothing crashed. */
  const pids = () =>
    Object.fromEntries(
      Object.entries(product.instances).map(([svc, [instance]]) => [
        svc,
        `${instance!.process.pid} restarts ${instance!.restarts}`,
      ]),
    );

  beforeAll(async () => {
    pgDir = mkdtempSync(join(tmpdir(), 'faults-pg-'));
    pgServer = await startEmbeddedPostgres({
      dataDir: pgDir,
      port: await freePort(),
      persistent: false,
      settings: { fsync: 'off', full_page_writes: 'off' },
    });
    redisServers.push(await startRedis());
    nginxDir = mkdtempSync(join(tmpdir(), 'faults-gateway-'));
    product = await startProduct({
      databaseUrl: pgServer.url,
      redisUrl: redisServers[0]!.url,
      nginxDir,
      env: { HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...allLimitsAt(1000000) },
      gatewayVars: { MEETINGS_GUARD_RATE: '1000000r/s', MEETINGS_GUARD_BURST: 1000000 },
      // As npm start runs them: a process that exits is started again.
      supervise: { log: (line) => supervisorLog.push(line) },
    });
    if (!product.gateway) throw new Error('nginx is not installed: apt-get install -y nginx-light');
    gateway = product.gateway;
    for (const svc of SERVICES) {
      const account = await admin(svc, 'create-account', '--email', `faults-${svc}@example.test`);
      auth[svc] = `Bearer ${(await admin(svc, 'create-key', '--account', account.accountId)).key}`;
    }
  });

  afterAll(async () => {
    printTable(rows);
    await product?.stop();
    for (const redis of redisServers) await redis.stop();
    await pgServer?.stop();
    rmSync(pgDir, { recursive: true, force: true });
    rmSync(nginxDir, { recursive: true, force: true });
  });

  const targets = (): Target[] => [
    {
      name: 'tasks',
      auth: auth.tasks,
      read: '/api/v1/tasks?view=all&limit=20',
      write: {
        method: 'POST',
        path: () => '/api/v1/tasks',
        body: () => ({ title: `fault ${randomUUID()}` }),
        idOf: (b) => b?.item?.id,
      },
    },
    {
      name: 'meetings',
      auth: auth.meetings,
      read: '/api/people',
      write: {
        method: 'PUT',
        path: () => `/api/notes/${randomDate()}`,
        body: () => ({ today: 'fault note' }),
        idOf: (b) => b?.date,
      },
    },
    {
      name: 'clipboard',
      auth: auth.clipboard,
      read: '/api/clipboard?limit=20',
      write: {
        method: 'POST',
        path: () => '/api/clipboard',
        body: () => ({ type: 'text', content: `fault ${randomUUID()}`, source: 'api' }),
        idOf: (b) => b?.id,
      },
    },
  ];

  const lostWrites = (acknowledged: Record<string, string[]>) => findLostWrites(pgServer.url, acknowledged);

  const acknowledgedCount = (acknowledged: Record<string, string[]>) =>
    Object.values(acknowledged).reduce((n, ids) => n + ids.length, 0);

  it('Postgres stopped for 3 s and started again: 503 with Retry-After meanwhile, no crash, no 500, serving within 2 s, no write lost', async () => {
    const before = pids();
    const window = { from: 0, to: 0 };
    let readyDuringOutage: number | undefined;
    let backAt = 0;
    const script = (async () => {
      await sleep(2000);
      window.from = Date.now();
      await pgServer.stop();
      await sleep(700);
      readyDuringOutage = (await fetch(`http://127.0.0.1:${product.ports.tasks}/readyz`)).status;
      await sleep(2300);
      await pgServer.start();
      window.to = backAt = Date.now();
      await sleep(5000);
    })();
    const load = await runLoad(gateway, targets(), { workers: 3, maxMs: 30_000, until: script });
    const summary = summarize('postgres restart', load.samples, window);
    rows.push(...summary);

    const fivexx = load.samples.filter((s) => s.status >= 500 && s.status !== 503);
    expect(fivexx).toEqual([]);
    expect(load.samples.filter((s) => s.status === 0)).toEqual([]);
    const unavailable = load.samples.filter((s) => s.status === 503);
    expect(unavailable.length).toBeGreaterThan(0);
    expect(unavailable.filter((s) => !s.retryAfter)).toEqual([]);
    expect(new Set(unavailable.map((s) => s.code))).toEqual(
      new Set(['service_unavailable', 'The service is temporarily unavailable; retry shortly']),
    );
    // Nothing hangs: every answer during the outage came within 2 s (plus a loaded machine's slack).
    expect(
      Math.max(...load.samples.filter((s) => s.at >= window.from && s.at < window.to).map((s) => s.ms)),
    ).toBeLessThan(2500);
    expect(readyDuringOutage).toBe(503);
    // The same processes serve again within 2 s of Postgres accepting connections.
    for (const row of summary) expect(Number(row['first 2xx after recovery (ms)'])).toBeGreaterThanOrEqual(0);
    for (const row of summary) expect(Number(row['first 2xx after recovery (ms)'])).toBeLessThan(2000);
    expect(pids()).toEqual(before);
    expect(backAt).toBeGreaterThan(0);
    expect(await lostWrites(load.acknowledged)).toEqual([]);
    expect(acknowledgedCount(load.acknowledged)).toBeGreaterThan(30);
    const ready = await fetch(`http://127.0.0.1:${product.ports.tasks}/readyz`);
    expect(ready.status).toBe(200);
  });

  it('a sensitive item due while Postgres is down is deleted, with its tombstone in the feed, within 2 s of Postgres being back', async () => {
    const call = async (method: string, path: string, body?: object) => {
      const res = await fetch(`${gateway}${path}`, {
        method,
        headers: { Authorization: auth.clipboard, 'Content-Type': 'application/json' },
        body: body && JSON.stringify(body),
      });
      return { status: res.status, body: await res.json() };
    };
    expect((await call('PUT', '/api/settings', { sensitiveItemTtlSeconds: 5 })).status).toBe(200);
    const item = (
      await call('POST', '/api/clipboard', {
        type: 'text',
        content: `otp ${randomUUID()}`,
        source: 'api',
        sensitive: true,
      })
    ).body;
    const due = Date.parse(item.expiresAt);
    // The feed read from just after the create: the earlier phases' load left this account more
    // changes than one page holds, so a page from the start may end before the tombstone.
    let cursor = '';
    for (let more = true; more;) {
      const page = await call(
        'GET',
        `/api/clipboard/pull?limit=1000${cursor && `&cursor=${encodeURIComponent(cursor)}`}`,
      );
      expect(page.status).toBe(200);
      ({ cursor, hasMore: more } = page.body);
    }
    await sleep(Math.max(0, due - Date.now() - 1500));
    await pgServer.stop();
    await sleep(3000);
    await pgServer.start();
    const backAt = Date.now();
    let deletedAt = 0;
    for (let i = 0; i < 100 && deletedAt === 0; i += 1) {
      const pull = await call('GET', `/api/clipboard/pull?limit=1000&cursor=${encodeURIComponent(cursor)}`);
      if (
        pull.status === 200 &&
        pull.body.changes.some((c: { id: string; op: string }) => c.id === item.id && c.op === 'delete')
      )
        deletedAt = Date.now();
      else await sleep(100);
    }
    process.stdout.write(
      `sensitive item due during a postgres restart: deleted ${deletedAt - backAt} ms after postgres was back\n`,
    );
    expect(deletedAt).toBeGreaterThan(0);
    expect(deletedAt - backAt).toBeLessThan(2000);
    expect((await call('GET', '/api/clipboard?limit=500')).body.items.map((i: { id: string }) => i.id)).not.toContain(
      item.id,
    );
  });

  it('Postgres connections terminated from the server side during transactions: the processes live', async () => {
    const before = pids();
    const superuser = new pg.Client({ connectionString: pgServer.url });
    await superuser.connect();
    let killed = 0;
    const script = (async () => {
      for (let i = 0; i < 40; i++) {
        const res = await superuser.query(
          "select count(pg_terminate_backend(pid))::int as n from pg_stat_activity where backend_type = 'client backend' and pid <> pg_backend_pid()",
        );
        killed += res.rows[0].n as number;
        await sleep(50);
      }
    })();
    const load = await runLoad(gateway, targets(), { workers: 3, maxMs: 20_000, until: script });
    await superuser.end();
    rows.push(...summarize('backends terminated', load.samples, { from: load.samples[0]?.at ?? 0, to: Date.now() }));
    expect(killed).toBeGreaterThan(0);
    expect(load.samples.filter((s) => s.status >= 500 && s.status !== 503)).toEqual([]);
    expect(load.samples.filter((s) => s.status === 0)).toEqual([]);
    expect(pids()).toEqual(before);
    expect(await lostWrites(load.acknowledged)).toEqual([]);
  });

  it('Redis killed for 5 s: reads fail open, Idempotency-Key creates go on exactly once, back within 1 s', async () => {
    const before = pids();
    type Outcome = { key: string; statuses: number[]; id?: string };
    const outcomes: Outcome[] = [];
    const samples: Array<{
      at: number;
      status: number;
      ms: number;
      retryAfter: string | null;
      kind: 'create' | 'read';
      body?: string | undefined;
    }> = [];
    let running = true;
    const window = { from: 0, to: 0 };
    const create = async (o: Outcome) => {
      const at = Date.now();
      const res = await fetch(`${gateway}/api/v1/tasks`, {
        method: 'POST',
        headers: { Authorization: auth.tasks, 'Content-Type': 'application/json', 'Idempotency-Key': o.key },
        body: JSON.stringify({ title: o.key }),
      }).catch(() => undefined);
      const status = res?.status ?? 0;
      const text = await res?.text();
      if (status === 201 && text) {
        const id = (JSON.parse(text) as { item: { id: string } }).item.id;
        // A key answered 201 twice must name the same task both times.
        if (o.id !== undefined && o.id !== id) o.statuses.push(-1);
        o.id = id;
      }
      o.statuses.push(status);
      samples.push({
        at,
        status,
        ms: Date.now() - at,
        retryAfter: res?.headers.get('retry-after') ?? null,
        kind: 'create',
      });
      return status;
    };
    const read = async () => {
      const at = Date.now();
      const res = await fetch(`${gateway}/api/v1/tasks?limit=5`, { headers: { Authorization: auth.tasks } }).catch(
        () => undefined,
      );
      const text = await res?.text();
      samples.push({
        at,
        status: res?.status ?? 0,
        ms: Date.now() - at,
        retryAfter: res?.headers.get('retry-after') ?? null,
        kind: 'read',
        ...(res?.status === 200 ? {} : { body: text }),
      });
    };
    const worker = async () => {
      while (running) {
        const o: Outcome = { key: `idem-${randomUUID()}`, statuses: [] };
        outcomes.push(o);
        // A client retries a create the same way, with the same key, until it is answered, and
        // goes on reading meanwhile (so reads are sampled while Redis is away, whatever the timing).
        for (let attempt = 0; attempt < 200 && running; attempt++) {
          const status = await create(o);
          if (status === 201 || status === 200) break;
          await read();
          await sleep(100);
        }
        await read();
      }
    };
    const workers = Array.from({ length: 4 }, worker);
    await sleep(1500);
    window.from = Date.now();
    await redisServers.at(-1)!.kill('SIGKILL');
    await sleep(5000);
    redisServers.push(await startRedis({ port: redisServers[0]!.port }));
    window.to = Date.now();
    await sleep(4000);
    running = false;
    await Promise.all(workers);
    // The last keys left unanswered are retried once more now that Redis is back.
    for (const o of outcomes.filter((x) => !x.statuses.some((s) => s === 201 || s === 200))) await create(o);

    const during = samples.filter((s) => s.at >= window.from && s.at < window.to);
    const firstCreateAfter = samples.find((s) => s.kind === 'create' && s.at >= window.to && s.status === 201);
    rows.push({
      phase: 'redis killed 5 s',
      service: 'tasks',
      requests: samples.length,
      statuses: Object.entries(
        samples.reduce<Record<number, number>>((m, s) => ({ ...m, [s.status]: (m[s.status] ?? 0) + 1 }), {}),
      )
        .map(([k, v]) => `${k}:${v}`)
        .join(' '),
      '5xx by code': samples.filter((s) => s.status >= 500).length
        ? `503:${samples.filter((s) => s.status === 503).length}`
        : '-',
      'conn errors': samples.filter((s) => s.status === 0).length,
      'max ms during fault': Math.max(0, ...during.map((s) => s.ms)),
      'first 2xx after recovery (ms)': firstCreateAfter ? firstCreateAfter.at + firstCreateAfter.ms - window.to : -1,
    });

    expect(samples.filter((s) => s.status >= 500 && s.status !== 503)).toEqual([]);
    expect(samples.filter((s) => s.status === 0)).toEqual([]);
    expect(samples.filter((s) => s.status === 503 && !s.retryAfter)).toEqual([]);
    // Rate limits fail open: reads go on while Redis is away.
    const readsDuring = during.filter((s) => s.kind === 'read');
    expect(readsDuring.length).toBeGreaterThan(0);
    expect(readsDuring.every((s) => s.status === 200)).toBe(true);
    // Keyed creates need no Redis (the key is kept in Postgres, in the create's own statement):
    // they go on being created, exactly once, while Redis is away.
    const createsDuring = during.filter((s) => s.kind === 'create');
    expect(createsDuring.length).toBeGreaterThan(0);
    expect(createsDuring.filter((s) => s.status !== 201)).toEqual([]);
    expect(firstCreateAfter).toBeDefined();
    expect(firstCreateAfter!.at + firstCreateAfter!.ms - window.to).toBeLessThan(1000 + 500);
    expect(pids()).toEqual(before);

    // Redis came back empty: every key ever answered 201 is replayed, and answers its first 201
    // again (kept with the task in Postgres), never a second task.
    const answered = outcomes.filter((o) => o.id !== undefined);
    expect(answered.length).toBeGreaterThan(20);
    for (const o of answered) {
      const firstId = o.id;
      expect(await create(o)).toBe(201);
      expect(o.id).toBe(firstId);
    }
    expect(outcomes.filter((o) => o.statuses.includes(-1)).map((o) => o.key)).toEqual([]);

    // Exactly once: one task per key that was answered 201, none for a key that never was.
    const db = new pg.Client({ connectionString: pgServer.url });
    await db.connect();
    const { rows: counts } = await db.query<{ title: string; n: number }>(
      "select title, count(*)::int as n from tasks.tasks where title like 'idem-%' group by title",
    );
    await db.end();
    const byTitle = new Map(counts.map((r) => [r.title, r.n]));
    const wrong = outcomes.filter(
      (o) => (byTitle.get(o.key) ?? 0) !== (o.statuses.some((s) => s === 201 || s === 200) ? 1 : 0),
    );
    expect(wrong.map((o) => `${o.key}: ${byTitle.get(o.key) ?? 0} tasks after ${o.statuses.join(',')}`)).toEqual([]);
    expect(outcomes.length).toBeGreaterThan(20);
  });

  it.each([
    ['SIGKILL', 'tasks killed (SIGKILL)'],
    ['SIGTERM', 'tasks stopped (SIGTERM)'],
  ] as const)(
    'a service process %s under load: restarted by the supervisor while the others keep serving',
    async (signal, phase) => {
      const instance = product.instances.tasks[0]!;
      const victim = instance.process;
      const restartsBefore = instance.restarts;
      const others = { meetings: pids().meetings, clipboard: pids().clipboard };
      const window = { from: 0, to: 0 };
      let exit: { code: number | null; signal: string | null } | undefined;
      let exitedAt = 0;
      victim.once('exit', (code, sig) => {
        exit = { code, signal: sig };
        exitedAt = Date.now();
      });
      const script = (async () => {
        await sleep(2000);
        window.from = Date.now();
        victim.kill(signal);
        for (let i = 0; i < 600 && instance.restarts === restartsBefore; i++) await sleep(50);
        await waitForPort(instance.port, 30_000);
        window.to = Date.now();
        await sleep(3000);
      })();
      const load = await runLoad(gateway, targets(), { workers: 3, maxMs: 60_000, until: script });
      const summary = summarize(phase, load.samples, window);
      rows.push(
        ...summary.map((r) => ({
          ...r,
          'first 2xx after recovery (ms)': `${r['first 2xx after recovery (ms)']} (down ${window.to - window.from} ms)`,
        })),
      );

      // The supervisor restarted it, and said so.
      expect(instance.restarts).toBe(restartsBefore + 1);
      expect(instance.process.pid).not.toBe(victim.pid);
      expect(
        supervisorLog.some(
          (l) => l.includes('tasks exited') && l.includes(signal === 'SIGKILL' ? 'SIGKILL' : 'code 0'),
        ),
      ).toBe(true);
      // SIGTERM drains: the process finishes what it holds and exits 0.
      if (signal === 'SIGTERM') {
        expect(exit).toEqual({ code: 0, signal: null });
        // Drained, not cut off at SHUTDOWN_TIMEOUT_MS (10 s): busy keep-alive connections close after their answer.
        expect(exitedAt - window.from).toBeLessThan(5000);
      }
      // The other services never noticed.
      expect({ meetings: pids().meetings, clipboard: pids().clipboard }).toEqual(others);
      const othersFailed = load.samples.filter((s) => s.service !== 'tasks' && (s.status === 0 || s.status >= 500));
      expect(othersFailed).toEqual([]);
      // Tasks: while no process listens the gateway answers a JSON 502 with Retry-After; never a 500.
      const tasksFailed = load.samples.filter(
        (s) => s.service === 'tasks' && (s.status === 0 || (s.status >= 500 && s.status !== 502)),
      );
      expect(tasksFailed).toEqual([]);
      expect(load.samples.filter((s) => s.status === 502 && !s.retryAfter)).toEqual([]);
      const tasksAfter = load.samples.filter((s) => s.service === 'tasks' && s.at >= window.to);
      expect(tasksAfter.some((s) => s.status >= 200 && s.status < 300)).toBe(true);
      expect(await lostWrites(load.acknowledged)).toEqual([]);
    },
  );
});

/** A random day in 1,000 years, so two note writes almost never share a date (a shared one is a 409). */
function randomDate(): string {
  const d = new Date(Date.UTC(2000, 0, 1) + Math.floor(Math.random() * 365_000) * 86_400_000);
  return d.toISOString().slice(0, 10);
}
