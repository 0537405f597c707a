import type { ChildProcess } from 'node:child_process';
import { startReceiver, startServiceProcess, stopChild, type Receiver } from '@app/devstack';
import { startStack, type Stack } from './stack.js';

/**
 * SERVICE_ROLE (DESIGN.md "Production shape"): the API process writes each event to the outbox and
 * never delivers it; a worker process of the same service, on the same database, delivers it and
 * serves nothing but its probes and metrics. Compose and k8s run them as separate deployments.
 */
let stack: Stack;
let receiver: Receiver;
let worker: ChildProcess | undefined;
const WEBHOOKS = { WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_RETRY_BASE_MS: '200' };

beforeAll(async () => {
  stack = await startStack({ tasks: { ...WEBHOOKS, SERVICE_ROLE: 'api' } });
  receiver = await startReceiver();
}, 120_000);
afterAll(async () => {
  if (worker) await stopChild(worker);
  await receiver?.close();
  await stack?.stop();
});

describe('an API process and a worker process of one service', () => {
  it('delivers nothing from the API process, and everything once a worker runs beside it', async () => {
    const { accountId } = await stack.admin('tasks', 'create-account', '--email', `roles-${Date.now()}@example.test`);
    const { key } = await stack.admin('tasks', 'create-key', '--account', accountId);
    const auth = { Authorization: `Bearer ${key as string}`, 'Content-Type': 'application/json' };
    const subscribed = await fetch(`${stack.gateway}/api/v1/webhooks`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ url: receiver.url, events: ['task.created'] }),
    });
    expect(subscribed.status).toBe(201);
    const created = (await (
      await fetch(`${stack.gateway}/api/v1/tasks`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ title: 'for the worker' }),
      })
    ).json()) as { item: { id: string } };
    await new Promise((r) => setTimeout(r, 2500));
    expect(receiver.received).toEqual([]);

    const started = await startServiceProcess('tasks', 'tasks-worker', {
      ...WEBHOOKS,
      DATABASE_URL: stack.databaseUrl,
      REDIS_URL: process.env.TEST_REDIS_URL,
      HOST: '127.0.0.1',
      LOG_LEVEL: 'error',
      SERVICE_ROLE: 'worker',
    });
    worker = started.child;
    const port = started.port;
    await receiver.waitFor((all) => all.some((r) => r.event.data?.id === created.item.id), 15_000);
    expect(receiver.received.filter((r) => r.event.data?.id === created.item.id)).toHaveLength(1);

    // The worker answers its probes and metrics, and no API route.
    const own = `http://127.0.0.1:${port}`;
    expect((await fetch(`${own}/healthz`)).status).toBe(200);
    expect((await fetch(`${own}/readyz`)).status).toBe(200);
    expect(await (await fetch(`${own}/metrics`)).text()).toContain('webhook_deliveries_total');
    for (const path of ['/api/v1/tasks', '/mcp/tasks', '/account/tasks', '/openapi.json']) {
      const res = await fetch(`${own}${path}`, { headers: auth });
      expect([path, res.status]).toEqual([path, 404]);
      expect(res.headers.get('content-type')).toMatch(/application\/json/);
    }
  }, 120_000);
});
