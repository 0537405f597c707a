import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { freePort, serviceEntry, startReceiver, stopChild, waitForPort, type Receiver } from '@app/devstack';
import { startStack, type Stack } from './stack.js';

/**
 * Traces through the real gateway into the real services, exported by the official OTLP/HTTP
 * exporter (OTEL_EXPORTER_OTLP_PROTOCOL=http/json) to a receiver in this test, which keeps every
 * span it is sent.
 */
interface Span {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Record<string, string | number | boolean | undefined>;
  links: Array<{ traceId: string; spanId: string }>;
}
const KIND = { SERVER: 2, CLIENT: 3, CONSUMER: 5 } as const;

let receiver: Server;
const spans: Span[] = [];
let stack: Stack;
let worker: ChildProcess | undefined;
let hooks: Receiver;
const WEBHOOKS = { WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_RETRY_BASE_MS: '200' };

beforeAll(async () => {
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { resourceSpans: any[] };
      for (const rs of body.resourceSpans) {
        const service = rs.resource.attributes.find((a: any) => a.key === 'service.name')?.value.stringValue as string;
        for (const ss of rs.scopeSpans) {
          for (const s of ss.spans) {
            const attributes = Object.fromEntries(
              (s.attributes ?? []).map((a: any) => [a.key, Object.values(a.value)[0] as string | number | boolean]),
            );
            const links = (s.links ?? []).map((l: any) => ({
              traceId: l.traceId as string,
              spanId: l.spanId as string,
            }));
            spans.push({
              service,
              traceId: s.traceId,
              spanId: s.spanId,
              parentSpanId: s.parentSpanId || undefined,
              name: s.name,
              kind: s.kind,
              attributes,
              links,
            });
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(receiver.address() as { port: number }).port}`;
  const otel = {
    OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_BSP_SCHEDULE_DELAY: '100',
  };
  // tasks as in compose and k8s: the API process writes events, a worker process delivers them.
  // clipboard as an operator who passes the trace on to receivers (WEBHOOK_TRACE_CONTEXT=1) runs it.
  stack = await startStack({
    tasks: { ...otel, ...WEBHOOKS, SERVICE_ROLE: 'api' },
    meetings: otel,
    clipboard: { ...otel, ...WEBHOOKS, WEBHOOK_TRACE_CONTEXT: '1' },
  });
  const port = await freePort();
  worker = spawn(process.execPath, serviceEntry('tasks', 'serve'), {
    env: {
      ...process.env,
      ...otel,
      ...WEBHOOKS,
      DATABASE_URL: stack.databaseUrl,
      REDIS_URL: process.env.TEST_REDIS_URL,
      TASKS_PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'error',
      SERVICE_ROLE: 'worker',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  await waitForPort(port, 60_000);
  hooks = await startReceiver();
}, 120_000);
afterAll(async () => {
  if (worker) await stopChild(worker);
  await hooks?.close();
  await stack?.stop();
  await new Promise<void>((resolve) => receiver.close(() => resolve()));
});

/** The trace's spans once `done` holds for them (the exporter sends in batches). */
async function traceOf(traceId: string, done: (trace: Span[]) => boolean): Promise<Span[]> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const trace = spans.filter((s) => s.traceId === traceId);
    if (done(trace) || Date.now() > deadline) return trace;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The trace as an indented tree, one span a line: how the test prints what it saw. */
function printTrace(trace: Span[], rootParent: string | undefined): string {
  const lines: string[] = [];
  const walk = (parent: string | undefined, depth: number) => {
    for (const s of trace.filter((x) => x.parentSpanId === parent)) {
      const what =
        s.attributes['db.statement'] ??
        s.attributes['db.query.text'] ??
        s.attributes['http.route'] ??
        s.attributes['http.target'] ??
        s.attributes['url.path'] ??
        '';
      const linked = s.links.map((l) => `  -> link ${l.traceId}/${l.spanId}`).join('');
      lines.push(
        `${'  '.repeat(depth)}${s.service} ${['?', 'INTERNAL', 'SERVER', 'CLIENT', 'PRODUCER', 'CONSUMER'][s.kind] ?? s.kind} ${s.name}${what ? `  [${String(what).slice(0, 90)}]` : ''}${linked}`,
      );
      walk(s.spanId, depth + 1);
    }
  };
  walk(rootParent, 0);
  return lines.join('\n');
}

const traceparent = () => {
  const traceId = randomBytes(16).toString('hex');
  const parentId = randomBytes(8).toString('hex');
  return { traceId, parentId, header: `00-${traceId}-${parentId}-01` };
};

describe('traces (OpenTelemetry, OTLP/HTTP)', () => {
  let key: string;
  beforeAll(async () => {
    const { accountId } = await stack.admin('tasks', 'create-account', '--email', `trace-${randomUUID()}@example.test`);
    key = (await stack.admin('tasks', 'create-key', '--account', accountId)).key as string;
  });

  it("gives one request through the gateway one trace: the service span under the caller's, its Postgres and Redis spans under it", async () => {
    const tp = traceparent();
    const res = await fetch(`${stack.gateway}/api/v1/tasks`, {
      method: 'POST',
      headers: {
        traceparent: tp.header,
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        'idempotency-key': randomUUID(),
      },
      body: JSON.stringify({ title: 'Traced' }),
    });
    expect(res.status).toBe(201);
    const requestId = res.headers.get('x-request-id');
    const trace = await traceOf(
      tp.traceId,
      (t) =>
        t.some((s) => s.kind === KIND.SERVER) &&
        t.some((s) => s.attributes['db.system'] === 'postgresql' || s.attributes['db.system.name'] === 'postgresql') &&
        t.some((s) => s.attributes['db.system'] === 'redis' || s.attributes['db.system.name'] === 'redis'),
    );
    console.log(`trace ${tp.traceId} (POST /api/v1/tasks through the gateway):\n${printTrace(trace, tp.parentId)}`);

    const server = trace.filter((s) => s.kind === KIND.SERVER);
    expect(server).toHaveLength(1);
    expect(server[0]).toMatchObject({ service: 'tasks', parentSpanId: tp.parentId });
    const ids = new Set(trace.map((s) => s.spanId));
    // Every span hangs off the service span (no second root), and the statements and Redis commands are in it.
    for (const s of trace.filter((x) => x !== server[0])) expect(ids.has(s.parentSpanId!)).toBe(true);
    expect(
      trace.filter((s) => (s.attributes['db.system'] ?? s.attributes['db.system.name']) === 'postgresql').length,
    ).toBeGreaterThan(0);
    expect(
      trace.filter((s) => (s.attributes['db.system'] ?? s.attributes['db.system.name']) === 'redis').length,
    ).toBeGreaterThan(0);
    // No statement parameters (user content) in any span.
    expect(JSON.stringify(trace)).not.toContain('Traced');

    // The gateway's access log line carries the same trace id and request id.
    const line = readFileSync(stack.accessLog, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((l) => l.requestId === requestId);
    expect(line).toMatchObject({ traceId: tp.traceId, method: 'POST', path: '/api/v1/tasks', status: 201 });
  }, 30_000);

  it("makes an MCP tool call's REST request a child of the tool call, in the same trace", async () => {
    const tp = traceparent();
    // The one-tool-per-operation toolset: createTask is one REST request.
    const res = await fetch(`${stack.gateway}/mcp/tasks?toolsets=all`, {
      method: 'POST',
      headers: {
        traceparent: tp.header,
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'createTask', arguments: { title: 'From an assistant' } },
      }),
    });
    expect(res.status).toBe(200);
    await res.text();
    const trace = await traceOf(tp.traceId, (t) => t.filter((s) => s.kind === KIND.SERVER).length >= 2);
    console.log(
      `trace ${tp.traceId} (MCP tools/call createTask through the gateway):\n${printTrace(trace, tp.parentId)}`,
    );

    const servers = trace.filter((s) => s.kind === KIND.SERVER);
    expect(servers).toHaveLength(2);
    const outer = servers.find((s) => s.parentSpanId === tp.parentId)!;
    const inner = servers.find((s) => s !== outer)!;
    const client = trace.find((s) => s.spanId === inner.parentSpanId)!;
    expect(client.kind).toBe(KIND.CLIENT);
    // The client span (the re-entered request) descends from the MCP request's span.
    let at: Span | undefined = client;
    while (at && at !== outer) at = trace.find((s) => s.spanId === at!.parentSpanId);
    expect(at).toBe(outer);
  }, 30_000);
  it("names a request by its route template, without its path's ids or its query string", async () => {
    const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const created = await fetch(`${stack.gateway}/api/v1/tasks`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ title: 'Looked up' }),
    });
    const { item } = (await created.json()) as { item: { id: string } };
    const searchText = `private-search-${randomUUID()}`;
    for (const [path, route] of [
      [`/api/v1/tasks/${item.id}?note=${searchText}`, '/api/v1/tasks/:id'],
      [`/api/v1/tasks?q=${searchText}`, '/api/v1/tasks'],
    ] as const) {
      const tp = traceparent();
      const res = await fetch(`${stack.gateway}${path}`, { headers: { ...auth, traceparent: tp.header } });
      expect(res.status).toBe(200);
      const trace = await traceOf(tp.traceId, (t) => t.some((s) => s.kind === KIND.SERVER));
      const server = trace.find((s) => s.kind === KIND.SERVER)!;
      expect(server.attributes).toMatchObject({ 'http.route': route, 'url.path': route });
      expect(server.attributes['url.query']).toBeUndefined();
      expect(JSON.stringify(trace)).not.toContain(searchText);
      expect(JSON.stringify(trace)).not.toContain(item.id);
    }
  }, 30_000);

  it('links a webhook delivery, made by the worker process in a trace of its own, to the REST create that emitted its event', async () => {
    const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    // A Slack-style target: its token is in the path (and this one has another in its query).
    const pathSecret = `T0/B0/${randomBytes(12).toString('hex')}`;
    const querySecret = randomBytes(12).toString('hex');
    const target = `${hooks.url}/services/${pathSecret}?token=${querySecret}`;
    const subscribed = await fetch(`${stack.gateway}/api/v1/webhooks`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ url: target, events: ['task.created'] }),
    });
    expect(subscribed.status).toBe(201);
    const tp = traceparent();
    const res = await fetch(`${stack.gateway}/api/v1/tasks`, {
      method: 'POST',
      headers: { ...auth, traceparent: tp.header },
      body: JSON.stringify({ title: 'Delivered' }),
    });
    expect(res.status).toBe(201);
    const { item } = (await res.json()) as { item: { id: string } };
    await hooks.waitFor((all) => all.some((r) => r.event.data?.id === item.id));

    const create = await traceOf(tp.traceId, (t) => t.some((s) => s.kind === KIND.SERVER));
    console.log(
      `trace ${tp.traceId} (POST /api/v1/tasks through the gateway, subscribed):\n${printTrace(create, tp.parentId)}`,
    );
    const server = create.filter((s) => s.kind === KIND.SERVER);
    expect(server).toHaveLength(1);
    expect(server[0]).toMatchObject({ service: 'tasks', parentSpanId: tp.parentId });

    // The delivery: a root span of another trace, linked to the create's trace and to its server span.
    const deadline = Date.now() + 10_000;
    let delivery: Span | undefined;
    while (!delivery && Date.now() < deadline) {
      delivery = spans.find(
        (s) =>
          s.kind === KIND.CONSUMER &&
          s.attributes['webhook.event_type'] === 'task.created' &&
          s.links.some((l) => l.traceId === tp.traceId),
      );
      if (!delivery) await new Promise((r) => setTimeout(r, 100));
    }
    expect(delivery).toBeDefined();
    const deliveryTrace = await traceOf(delivery!.traceId, (t) => t.some((s) => s.kind === KIND.CLIENT));
    console.log(
      `trace ${delivery!.traceId} (the webhook delivery, by the worker process):\n${printTrace(deliveryTrace, undefined)}`,
    );
    expect(delivery!.traceId).not.toBe(tp.traceId);
    expect(delivery!.parentSpanId).toBeUndefined();
    expect(delivery!.service).toBe('tasks');
    expect(delivery!.links).toHaveLength(1);
    expect(delivery!.links[0]!.traceId).toBe(tp.traceId);
    // The span that was active when the handler wrote the task and its event: the route's handler
    // span, under the create's server span.
    const linked = create.find((s) => s.spanId === delivery!.links[0]!.spanId);
    console.log(
      `the delivery links to: ${linked?.service} ${linked?.name} [${linked?.attributes['http.route']}] in trace ${tp.traceId}`,
    );
    expect(linked).toMatchObject({ service: 'tasks', name: 'request handler', parentSpanId: server[0]!.spanId });
    expect(linked!.attributes['http.route']).toBe('/api/v1/tasks');
    // The POST to the receiver is its child, naming the target by scheme and host only.
    const post = deliveryTrace.find((s) => s.kind === KIND.CLIENT && s.parentSpanId === delivery!.spanId);
    expect(post).toBeDefined();
    expect(post!.attributes['url.full']).toBe(new URL(hooks.url).origin);
    for (const secret of [pathSecret, querySecret]) expect(JSON.stringify(deliveryTrace)).not.toContain(secret);
    // The receiver is told nothing of our traces (WEBHOOK_TRACE_CONTEXT is unset here).
    const received = hooks.received.find((r) => r.event.data?.id === item.id)!;
    expect(received.headers.traceparent).toBeUndefined();
    expect(received.headers.tracestate).toBeUndefined();
  }, 30_000);

  it("sends a receiver the delivery's traceparent where WEBHOOK_TRACE_CONTEXT=1", async () => {
    const { accountId } = await stack.admin(
      'clipboard',
      'create-account',
      '--email',
      `trace-${randomUUID()}@example.test`,
    );
    const clipKey = (await stack.admin('clipboard', 'create-key', '--account', accountId)).key as string;
    const auth = { authorization: `Bearer ${clipKey}`, 'content-type': 'application/json' };
    const subscribed = await fetch(`${stack.gateway}/api/clipboard/webhooks`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ url: hooks.url, events: ['clipboard.item.created'] }),
    });
    expect(subscribed.status).toBe(201);
    const res = await fetch(`${stack.gateway}/api/clipboard`, {
      method: 'POST',
      headers: { ...auth, traceparent: traceparent().header },
      body: JSON.stringify({ type: 'text', content: 'passed on', source: 'api' }),
    });
    expect(res.status).toBe(201);
    const { id } = (await res.json()) as { id: string };
    await hooks.waitFor((all) => all.some((r) => r.event.data?.id === id));
    const received = hooks.received.find((r) => r.event.data?.id === id)!;
    const [, traceId] = /^00-([0-9a-f]{32})-[0-9a-f]{16}-0[01]$/.exec(String(received.headers.traceparent)) ?? [];
    expect(traceId).toBeDefined();
    const delivery = await traceOf(traceId!, (t) => t.some((s) => s.kind === KIND.CONSUMER));
    expect(delivery.find((s) => s.kind === KIND.CONSUMER)).toMatchObject({
      service: 'clipboard',
      attributes: { 'webhook.event_type': 'clipboard.item.created' },
    });
  }, 60_000);
});
