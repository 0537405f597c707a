import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { adminCommand, freePort, startEmbeddedPostgres, startProduct, startReceiver, startRedis, type Receiver, type RunningPostgres, type RunningProduct, type RunningRedis } from '@app/devstack';
import { printTable } from './faults/load.js';

/**
 * Webhook faults (part of `npm run test:faults` and `npm test`): the built tasks service as two
 * real processes (`--replicas 2`) behind nginx, a receiver on 127.0.0.1, and the faults of
 * DESIGN.md between commit and delivery: a Postgres restart, SIGKILL of both processes while
 * deliveries are in flight, a receiver that is down for a while. After each, every event whose
 * write was acknowledged arrives, and no event is ever in flight twice at once.
 */
jest.setTimeout(180_000);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('webhooks under faults', () => {
  let pgServer: RunningPostgres;
  let pgDir: string;
  let redis: RunningRedis;
  let product: RunningProduct;
  let nginxDir: string;
  let gateway: string;
  let auth: string;
  let receiver: Receiver;
  let receiverPort: number;
  let secret: string;
  /** Deliveries of one event id in flight right now, and the worst overlap seen. */
  const inFlight = new Map<string, number>();
  let concurrentTwice = 0;
  let answerDelayMs = 20;
  const rows: Array<Record<string, string | number>> = [];

  const admin = (...argv: string[]) => adminCommand('tasks', pgServer.url, ...argv);

  /** A receiver on the same port each time, counting overlapping deliveries of one event. */
  async function openReceiver(): Promise<void> {
    receiver = await startReceiver(receiverPort);
    receiver.answer = async (r) => {
      const n = (inFlight.get(r.id) ?? 0) + 1;
      inFlight.set(r.id, n);
      if (n > 1) concurrentTwice += 1;
      // Answered after a moment, so two overlapping deliveries of one event would be seen; a
      // sender that hung up (killed) no longer counts as delivering.
      for (const until = Date.now() + answerDelayMs; Date.now() < until && !r.gone;) await sleep(10);
      inFlight.set(r.id, inFlight.get(r.id)! - 1);
      return 204;
    };
  }

  const all: Receiver['received'] = [];
  const collect = () => {
    for (const r of receiver.received) if (!all.includes(r)) all.push(r);
  };

  /** Creates a task through the gateway; its id when the create was acknowledged (201). */
  async function create(): Promise<string | undefined> {
    try {
      const res = await fetch(`${gateway}/api/v1/tasks`, {
        method: 'POST',
        headers: { authorization: auth, 'content-type': 'application/json' },
        body: JSON.stringify({ title: `hook ${randomUUID()}` }),
        signal: AbortSignal.timeout(5000),
      });
      if (res.status !== 201) return undefined;
      return ((await res.json()) as { item: { id: string } }).item.id;
    } catch {
      return undefined;
    }
  }

  /** Waits until every committed task id has arrived; one row of the fault table. */
  async function expectAllDelivered(phase: string, committed: string[], started: number): Promise<void> {
    const wanted = new Set(committed);
    const until = Date.now() + 60_000;
    for (;;) {
      collect();
      const got = new Set(all.filter((r) => r.event.type === 'task.created' && wanted.has(r.event.data.id)).map((r) => r.event.data.id as string));
      if (got.size === wanted.size || Date.now() > until) break;
      await sleep(100);
    }
    const mine = all.filter((r) => r.event.type === 'task.created' && wanted.has(r.event.data.id));
    const delivered = new Set(mine.map((r) => r.event.data.id as string));
    const unsigned = mine.filter((r) => !receiver.verifies(r, secret)).length;
    rows.push({
      phase,
      committed: wanted.size,
      delivered: delivered.size,
      'sent again (after a crash)': mine.length - delivered.size,
      'in flight twice at once': concurrentTwice,
      unsigned,
      'all in (s)': ((Date.now() - started) / 1000).toFixed(1),
    });
    expect(delivered.size).toBe(wanted.size);
    expect(concurrentTwice).toBe(0);
    expect(unsigned).toBe(0);
  }

  beforeAll(async () => {
    pgDir = mkdtempSync(join(tmpdir(), 'hooks-pg-'));
    pgServer = await startEmbeddedPostgres({ dataDir: pgDir, port: await freePort(), persistent: false, settings: { fsync: 'off', full_page_writes: 'off' } });
    redis = await startRedis();
    nginxDir = mkdtempSync(join(tmpdir(), 'hooks-gateway-'));
    receiverPort = await freePort();
    await openReceiver();
    product = await startProduct({
      databaseUrl: pgServer.url,
      redisUrl: redis.url,
      nginxDir,
      replicas: 2,
      env: { HOST: '127.0.0.1', LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '1000000', RATE_LIMIT_READS_PER_MINUTE: '1000000', RATE_LIMIT_WRITES_PER_MINUTE: '1000000', RATE_LIMIT_NETWORK_PER_MINUTE: '1000000', WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_RETRY_BASE_MS: '200' },
      gatewayVars: { MEETINGS_GUARD_RATE: '1000000r/s', MEETINGS_GUARD_BURST: 1000000 },
      supervise: { log: () => {} },
    });
    if (!product.gateway) throw new Error('nginx is not installed: apt-get install -y nginx-light');
    gateway = product.gateway;
    const account = await admin('create-account', '--email', 'hooks@example.test');
    auth = `Bearer ${(await admin('create-key', '--account', account.accountId)).key}`;
    const res = await fetch(`${gateway}/api/v1/webhooks`, {
      method: 'POST',
      headers: { authorization: auth, 'content-type': 'application/json' },
      body: JSON.stringify({ url: receiver.url, events: ['task.created'] }),
    });
    expect(res.status).toBe(201);
    secret = ((await res.json()) as { secret: string }).secret;
  });

  afterAll(async () => {
    printTable(rows);
    await receiver?.close();
    await product?.stop();
    await redis?.stop();
    await pgServer?.stop();
    rmSync(pgDir, { recursive: true, force: true });
    rmSync(nginxDir, { recursive: true, force: true });
  });

  it('two replicas: 200 creates spread over both are each delivered, never twice at once', async () => {
    const started = Date.now();
    const ids: string[] = [];
    await Promise.all(Array.from({ length: 4 }, async () => {
      for (let i = 0; i < 50; i++) {
        const id = await create();
        if (id) ids.push(id);
      }
    }));
    expect(ids).toHaveLength(200);
    await expectAllDelivered('2 replicas, 200 creates', ids, started);
  });

  it('receiver down for 5 s: what was committed meanwhile arrives once it is back', async () => {
    collect();
    await receiver.close();
    const started = Date.now();
    const ids: string[] = [];
    for (let i = 0; i < 30; i++) ids.push((await create())!);
    await sleep(5000);
    await openReceiver();
    await expectAllDelivered('receiver down 5 s', ids, started);
  });

  it('Postgres stopped for 3 s and started again while creating: every acknowledged create is delivered', async () => {
    const started = Date.now();
    const ids: string[] = [];
    let stop = false;
    const writer = (async () => {
      while (!stop) {
        const id = await create();
        if (id) ids.push(id);
        await sleep(20);
      }
    })();
    await sleep(500);
    await pgServer.stop();
    await sleep(3000);
    await pgServer.start();
    await sleep(2500);
    stop = true;
    await writer;
    expect(ids.length).toBeGreaterThan(10);
    await expectAllDelivered('postgres restart (3 s)', ids, started);
  });

  it('SIGKILL of both processes while deliveries are in flight: every committed event is delivered after the restart', async () => {
    answerDelayMs = 1500;
    const started = Date.now();
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) ids.push((await create())!);
    await sleep(300);
    const before = product.instances.tasks.map((i) => i.restarts);
    for (const instance of product.instances.tasks) instance.process.kill('SIGKILL');
    for (let i = 0; i < 400 && product.instances.tasks.some((inst, n) => inst.restarts === before[n]); i++) await sleep(50);
    answerDelayMs = 20;
    await expectAllDelivered('SIGKILL both replicas mid-delivery', ids, started);
  });
});
