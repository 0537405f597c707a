import { randomUUID } from 'node:crypto';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client, StreamableHTTPClientTransport, type CallToolResult, type ElicitResult } from '@modelcontextprotocol/client';
import { startRedis, type RunningRedis } from '@app/devstack';
import { startStack, type Stack } from '../stack.js';

/*
 * The three MCP revisions at once, behind the gateway with two instances of each service: a v2
 * SDK client on 2026-07-28 (no initialize, no session) and a v1 SDK client on 2025-06-18 (the
 * handshake) both list and call tools; on 2026-07-28 a delete is confirmed by a multi round-trip
 * whose retry reaches the other instance (the state travels signed in requestState).
 */
jest.setTimeout(120_000);

let stack: Stack;
let redis: RunningRedis;

beforeAll(async () => {
  redis = await startRedis();
  stack = await startStack({}, { replicas: 2, redisUrl: redis.url });
}, 180_000);
afterAll(async () => {
  await stack?.stop();
  await redis?.stop();
});

const MCP = () => `${stack.gateway}/mcp/tasks`;

async function tasksKey(): Promise<string> {
  const { accountId } = await stack.admin('tasks', 'create-account', '--email', `revisions-${randomUUID()}@example.test`);
  return (await stack.admin('tasks', 'create-key', '--account', accountId)).key as string;
}

async function addTask(key: string, title: string): Promise<string> {
  const res = await fetch(`${stack.gateway}/api/v1/tasks`, { method: 'POST', headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' }, body: JSON.stringify({ title }) });
  expect(res.status).toBe(201);
  return ((await res.json()) as { item: { id: string } }).item.id;
}

const taskStatus = async (key: string, id: string) => (await fetch(`${stack.gateway}/api/v1/tasks/${id}`, { headers: { Authorization: `Bearer ${key}` } })).status;

/** A v2 SDK client pinned to 2026-07-28; with `elicit` it answers input requests. `route` picks the URL of each POST. */
async function modern(key: string, elicit?: (message: string) => ElicitResult, route?: (body: string) => string): Promise<Client> {
  const client = new Client({ name: 'revisions-test', version: '1.0.0' }, { capabilities: elicit ? { elicitation: { form: {} } } : {}, versionNegotiation: { mode: { pin: '2026-07-28' } } });
  if (elicit) client.setRequestHandler('elicitation/create', async (request) => elicit((request.params as { message: string }).message));
  await client.connect(new StreamableHTTPClientTransport(new URL(MCP()), {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
    ...(route ? { fetch: (url: string | URL, init?: RequestInit) => fetch(typeof init?.body === 'string' && init.method === 'POST' ? route(init.body) : url, init) } : {}),
  }));
  return client;
}

const deleteCall = (id: string) => ({ name: 'update_tasks', arguments: { tasks: [{ action: 'delete', id }] } });

describe('MCP revisions', () => {
  it('serves a v2 SDK client on 2026-07-28: a fixed tool order with icons, cached privately, and a call', async () => {
    const key = await tasksKey();
    const client = await modern(key);
    expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    const first = await client.listTools();
    const again = await client.listTools();
    expect(again.tools.map((t) => t.name)).toEqual(first.tools.map((t) => t.name));
    expect(first.tools.length).toBeGreaterThan(0);
    for (const tool of first.tools) expect(tool.icons?.[0]).toMatchObject({ src: `${stack.gateway}/account/tasks/icon.svg`, mimeType: 'image/svg+xml' });
    const icon = await fetch(first.tools[0]!.icons![0]!.src);
    expect(icon.status).toBe(200);
    expect(icon.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
    expect(await icon.text()).toContain('<svg');
    const id = await addTask(key, 'Read by a v2 client');
    const found = (await client.callTool({ name: 'find_tasks', arguments: { id } }));
    expect(found.isError).toBeFalsy();
    expect(JSON.stringify(found.structuredContent)).toContain('Read by a v2 client');
    await client.close();

    // The wire: resultType, ttlMs and cacheScope on the list, and the Mcp-Method header checked against the body.
    const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} };
    const post = (method: string, header: string) => fetch(MCP(), {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': header },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { _meta: meta } }),
    });
    const listed = (await (await post('tools/list', 'tools/list')).json()) as { result: Record<string, unknown> };
    expect(listed.result).toMatchObject({ resultType: 'complete', cacheScope: 'private' });
    expect(listed.result.ttlMs).toBeGreaterThan(0);
    const discovered = (await (await post('server/discover', 'server/discover')).json()) as { result: Record<string, any> };
    expect(discovered.result.supportedVersions).toEqual(expect.arrayContaining(['2026-07-28']));
    const mismatch = (await (await post('tools/list', 'prompts/list')).json()) as { error?: { code: number } };
    expect(mismatch.error?.code).toBe(-32020);
  });

  it('serves a v1 SDK client on 2025-06-18 by its handshake: it lists and calls a tool', async () => {
    const key = await tasksKey();
    const client = new V1Client({ name: 'revisions-v1', version: '1.0.0' });
    // A client whose newest revision is 2025-06-18: its initialize asks for that one.
    const older = (url: string | URL, init?: RequestInit) => fetch(url, typeof init?.body === 'string' ? { ...init, body: init.body.replace('"protocolVersion":"2025-11-25"', '"protocolVersion":"2025-06-18"') } : init);
    const transport = new V1Transport(new URL(MCP()), { requestInit: { headers: { Authorization: `Bearer ${key}` } }, fetch: older });
    await client.connect(transport);
    expect(transport.protocolVersion).toBe('2025-06-18');
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toContain('find_tasks');
    const id = await addTask(key, 'Read by a v1 client');
    const found = (await client.callTool({ name: 'find_tasks', arguments: { id } })) as CallToolResult;
    expect(found.isError).toBeFalsy();
    await client.close();
  });

  it('confirms a delete by multi round-trip whose retry reaches the other instance; a decline is 409 not_confirmed', async () => {
    const key = await tasksKey();
    const [a, b] = stack.instances.tasks;
    // The first call goes to instance a, its retry (carrying inputResponses) to instance b.
    const route = (body: string) => `http://127.0.0.1:${body.includes('"inputResponses"') ? b!.port : a!.port}/mcp/tasks`;
    const asked: string[] = [];
    const answers: ElicitResult[] = [{ action: 'accept', content: { confirm: true } }, { action: 'decline' }];
    const client = await modern(key, (message) => {
      asked.push(message);
      return answers.shift()!;
    }, route);
    const gone = await addTask(key, 'Cancel the gym membership');
    const confirmed = (await client.callTool(deleteCall(gone)));
    expect(confirmed.isError).toBeFalsy();
    expect(asked[0]).toContain('"Cancel the gym membership"');
    expect(asked[0]).toContain(gone);
    expect(await taskStatus(key, gone)).toBe(404);

    const kept = await addTask(key, 'Keep me');
    const declined = (await client.callTool(deleteCall(kept))) as CallToolResult & { structuredContent: any };
    expect(declined.isError).toBe(true);
    expect(declined.structuredContent.status).toBe(409);
    expect(JSON.stringify(declined.structuredContent)).toContain('not_confirmed');
    expect(await taskStatus(key, kept)).toBe(200);
    expect(answers).toHaveLength(0);
    await client.close();
  });

  it('refuses a retry whose requestState was altered or made for another call', async () => {
    const key = await tasksKey();
    const id = await addTask(key, 'Guarded');
    const other = await addTask(key, 'Other');
    const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } } };
    const call = async (taskId: string, extra: Record<string, unknown> = {}) => (await (await fetch(MCP(), {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': 'tools/call', 'Mcp-Name': 'update_tasks' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { ...deleteCall(taskId), _meta: meta, ...extra } }),
    })).json()) as { result?: Record<string, any>; error?: { code: number } };
    const first = await call(id);
    expect(first.result).toMatchObject({ resultType: 'input_required' });
    const yes = { confirm: { action: 'accept', content: { confirm: true } } };
    // The state of the call on `id`, replayed to delete `other`: asked again, nothing deleted.
    const replayed = await call(other, { inputResponses: yes, requestState: first.result!.requestState });
    expect(replayed.result).toMatchObject({ resultType: 'input_required' });
    const altered = await call(id, { inputResponses: yes, requestState: `${String(first.result!.requestState).slice(0, -2)}AA` });
    expect(altered.error?.code).toBe(-32602);
    expect(await taskStatus(key, id)).toBe(200);
    expect(await taskStatus(key, other)).toBe(200);
  });
});
