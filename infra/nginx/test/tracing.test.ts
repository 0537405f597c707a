import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
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
}
const KIND = { SERVER: 2, CLIENT: 3 } as const;

let receiver: Server;
const spans: Span[] = [];
let stack: Stack;

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
            const attributes = Object.fromEntries((s.attributes ?? []).map((a: any) => [a.key, Object.values(a.value)[0] as string | number | boolean]));
            spans.push({ service, traceId: s.traceId, spanId: s.spanId, parentSpanId: s.parentSpanId || undefined, name: s.name, kind: s.kind, attributes });
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(receiver.address() as { port: number }).port}`;
  const otel = { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_BSP_SCHEDULE_DELAY: '100' };
  stack = await startStack({ tasks: otel, meetings: otel, clipboard: otel });
}, 120_000);
afterAll(async () => {
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
function printTrace(trace: Span[], rootParent: string): string {
  const lines: string[] = [];
  const walk = (parent: string | undefined, depth: number) => {
    for (const s of trace.filter((x) => x.parentSpanId === parent)) {
      const what = s.attributes['db.statement'] ?? s.attributes['db.query.text'] ?? s.attributes['http.route'] ?? s.attributes['http.target'] ?? s.attributes['url.path'] ?? '';
      lines.push(`${'  '.repeat(depth)}${s.service} ${['?', 'INTERNAL', 'SERVER', 'CLIENT'][s.kind] ?? s.kind} ${s.name}${what ? `  [${String(what).slice(0, 90)}]` : ''}`);
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

  it('gives one request through the gateway one trace: the service span under the caller\'s, its Postgres and Redis spans under it', async () => {
    const tp = traceparent();
    const res = await fetch(`${stack.gateway}/api/v1/tasks`, {
      method: 'POST',
      headers: { traceparent: tp.header, authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
      body: JSON.stringify({ title: 'Traced' }),
    });
    expect(res.status).toBe(201);
    const requestId = res.headers.get('x-request-id');
    const trace = await traceOf(tp.traceId, (t) => t.some((s) => s.kind === KIND.SERVER) && t.some((s) => s.attributes['db.system'] === 'postgresql' || s.attributes['db.system.name'] === 'postgresql') && t.some((s) => s.attributes['db.system'] === 'redis' || s.attributes['db.system.name'] === 'redis'));
    console.log(`trace ${tp.traceId} (POST /api/v1/tasks through the gateway):\n${printTrace(trace, tp.parentId)}`);

    const server = trace.filter((s) => s.kind === KIND.SERVER);
    expect(server).toHaveLength(1);
    expect(server[0]).toMatchObject({ service: 'tasks', parentSpanId: tp.parentId });
    const ids = new Set(trace.map((s) => s.spanId));
    // Every span hangs off the service span (no second root), and the statements and Redis commands are in it.
    for (const s of trace.filter((x) => x !== server[0])) expect(ids.has(s.parentSpanId!)).toBe(true);
    expect(trace.filter((s) => (s.attributes['db.system'] ?? s.attributes['db.system.name']) === 'postgresql').length).toBeGreaterThan(0);
    expect(trace.filter((s) => (s.attributes['db.system'] ?? s.attributes['db.system.name']) === 'redis').length).toBeGreaterThan(0);
    // No statement parameters (user content) in any span.
    expect(JSON.stringify(trace)).not.toContain('Traced');

    // The gateway's access log line carries the same trace id and request id.
    const line = readFileSync(stack.accessLog, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.requestId === requestId);
    expect(line).toMatchObject({ traceId: tp.traceId, method: 'POST', path: '/api/v1/tasks', status: 201 });
  }, 30_000);

  it('makes an MCP tool call\'s REST request a child of the tool call, in the same trace', async () => {
    const tp = traceparent();
    // The one-tool-per-operation toolset: createTask is one REST request.
    const res = await fetch(`${stack.gateway}/mcp/tasks?toolsets=all`, {
      method: 'POST',
      headers: { traceparent: tp.header, authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'createTask', arguments: { title: 'From an assistant' } } }),
    });
    expect(res.status).toBe(200);
    await res.text();
    const trace = await traceOf(tp.traceId, (t) => t.filter((s) => s.kind === KIND.SERVER).length >= 2);
    console.log(`trace ${tp.traceId} (MCP tools/call createTask through the gateway):\n${printTrace(trace, tp.parentId)}`);

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
});
