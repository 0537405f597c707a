import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  ElicitRequestSchema,
  type CallToolResult,
  type ElicitRequest,
  type ElicitResult,
} from '@modelcontextprotocol/sdk/types.js';
import {
  Client as V2Client,
  StreamableHTTPClientTransport as V2Transport,
  type CallToolResult as V2CallToolResult,
  type ElicitResult as V2ElicitResult,
} from '@modelcontextprotocol/client';
import { startRedis, waitForPort, type RunningRedis } from '@app/devstack';
import { startStack, type Stack } from '../stack.js';
import { served } from './metrics.js';

/*
 * The MCP revisions side by side, and destructive MCP tools confirmed by elicitation, behind the gateway with two instances of each
 * service and no sticky sessions: the question goes out on one instance's stream, the client's
 * answer may come back to the other. A client without elicitation keeps the `confirm: true`
 * rule. And a caller revoked while its call runs gets an HTTP 401 with the challenge, never a
 * tool result. The stack has a redis-server of its own, which one test kills.
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
type Elicit = (params: ElicitRequest['params']) => Promise<ElicitResult> | ElicitResult;

async function tasksKey(): Promise<{ key: string; id: string }> {
  const { accountId } = await stack.admin('tasks', 'create-account', '--email', `elicit-${randomUUID()}@example.test`);
  const { key, id } = await stack.admin('tasks', 'create-key', '--account', accountId);
  return { key: key as string, id: id as string };
}

async function addTask(key: string, title: string): Promise<string> {
  const res = await fetch(`${stack.gateway}/api/v1/tasks`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ title }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { item: { id: string } }).item.id;
}

const taskStatus = async (key: string, id: string) =>
  (await fetch(`${stack.gateway}/api/v1/tasks/${id}`, { headers: { Authorization: `Bearer ${key}` } })).status;

/** An SDK client; with `elicit` it declares elicitation and answers with it. `route` picks the URL of each POST. */
async function connect(
  key: string,
  elicit?: Elicit,
  route?: (body: string) => string,
): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const client = new Client(
    { name: 'elicitation-test', version: '1.0.0' },
    { capabilities: elicit ? { elicitation: {} } : {} },
  );
  if (elicit) client.setRequestHandler(ElicitRequestSchema, async (request) => elicit(request.params));
  const transport = new StreamableHTTPClientTransport(new URL(MCP()), {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
    ...(route
      ? {
          fetch: (url: string | URL, init?: RequestInit) =>
            fetch(typeof init?.body === 'string' && init.method === 'POST' ? route(init.body) : url, init),
        }
      : {}),
  });
  await client.connect(transport);
  return { client, transport };
}

const deleteCall = (id: string, extra: Record<string, unknown> = {}) => ({
  name: 'update_tasks',
  arguments: { tasks: [{ action: 'delete', id }], ...extra },
});
/**
 * `token` (`<payload>.<base64url HMAC-SHA256>`) with its MAC altered in the first character, whose
 * six bits all count. Not the last ones: a 32-byte MAC's last character carries 4 bits and the
 * decoder drops the other 2, so a MAC that already ended in bits that decode as `AA` (1 in 1,024)
 * would come back unchanged and be accepted.
 */
const alterMac = (token: string): string => {
  const at = token.lastIndexOf('.') + 1;
  return `${token.slice(0, at)}${token[at] === 'A' ? 'B' : 'A'}${token.slice(at + 1)}`;
};
const text = (r: CallToolResult) => r.content.map((c) => (c.type === 'text' ? c.text : '')).join('');

/** A delete the user did not confirm, on either revision: a 409 tool error, and the task still there. */
async function expectKept(
  result: { isError?: boolean; structuredContent?: unknown },
  key: string,
  id: string,
): Promise<void> {
  expect(result.isError).toBe(true);
  expect((result.structuredContent as { status?: number } | undefined)?.status).toBe(409);
  expect(await taskStatus(key, id)).toBe(200);
}

describe('destructive tools with a client that answers elicitation', () => {
  it('issues a signed session id on initialize and asks before deleting: accept deletes, naming the task', async () => {
    const { key } = await tasksKey();
    const id = await addTask(key, 'Cancel the gym membership');
    const asked: string[] = [];
    const { client, transport } = await connect(key, (params) => {
      asked.push(params.message);
      return { action: 'accept', content: { confirm: true } };
    });
    expect(transport.sessionId).toMatch(/^[\w-]+\.[\w-]+$/);
    const result = (await client.callTool(deleteCall(id))) as CallToolResult;
    expect(result.isError).toBeFalsy();
    expect(asked).toHaveLength(1);
    expect(asked[0]).toContain('"Cancel the gym membership"');
    expect(asked[0]).toContain(id);
    expect(await taskStatus(key, id)).toBe(404);
    await client.close();
  });

  it('changes nothing when the user declines or cancels, even with confirm: true from the model', async () => {
    const { key } = await tasksKey();
    const id = await addTask(key, 'Keep me');
    const answers: ElicitResult[] = [
      { action: 'decline' },
      { action: 'cancel' },
      { action: 'accept', content: { confirm: false } },
    ];
    const { client } = await connect(key, () => answers.shift()!);
    for (const args of [{}, { confirm: true }, {}]) {
      const result = (await client.callTool(deleteCall(id, args))) as CallToolResult;
      await expectKept(result, key, id);
      expect(text(result)).toContain('nothing was changed');
    }
    expect(answers).toHaveLength(0);
    await client.close();
  });

  it('asks nothing of a client without elicitation: confirm: true is required, as before', async () => {
    const { key } = await tasksKey();
    const id = await addTask(key, 'Old rule');
    const { client, transport } = await connect(key);
    expect(transport.sessionId).toBeDefined();
    const refused = (await client.callTool(deleteCall(id))) as CallToolResult;
    expect(refused.isError).toBe(true);
    expect(text(refused)).toContain('confirm');
    expect(await taskStatus(key, id)).toBe(200);
    expect(((await client.callTool(deleteCall(id, { confirm: true }))) as CallToolResult).isError).toBeFalsy();
    expect(await taskStatus(key, id)).toBe(404);
    await client.close();
  });

  it('delivers the answer to the instance that asked when it reaches the other one', async () => {
    const { key } = await tasksKey();
    const [a, b] = stack.instances.tasks;
    // The call goes to instance a, every answer (a JSON-RPC response: no method) to instance b.
    const route = (body: string) =>
      `http://127.0.0.1:${'method' in (JSON.parse(body) as object) ? a!.port : b!.port}/mcp/tasks`;
    const { client } = await connect(key, () => ({ action: 'accept', content: { confirm: true } }), route);
    const answeredByB = await served(b!, { route: '/mcp/tasks', status: '202' });
    const ids = [await addTask(key, 'Crossed one'), await addTask(key, 'Crossed two')];
    const result = (await client.callTool({
      name: 'update_tasks',
      arguments: { tasks: ids.map((id) => ({ action: 'delete', id })) },
    })) as CallToolResult;
    expect(result.isError).toBeFalsy();
    for (const id of ids) expect(await taskStatus(key, id)).toBe(404);
    expect(await served(b!, { route: '/mcp/tasks', status: '202' })).toBe(answeredByB + 1);
    await client.close();

    // Through the gateway, which balances POSTs over both: each call is answered wherever its answer lands.
    const through = await connect(key, () => ({ action: 'accept', content: { confirm: true } }));
    const before = await Promise.all([a!, b!].map((i) => served(i, { route: '/mcp/tasks', status: '202' })));
    for (let i = 0; i < 6; i += 1) {
      const id = await addTask(key, `Through ${i}`);
      expect(((await through.client.callTool(deleteCall(id))) as CallToolResult).isError).toBeFalsy();
      expect(await taskStatus(key, id)).toBe(404);
    }
    const after = await Promise.all([a!, b!].map((i) => served(i, { route: '/mcp/tasks', status: '202' })));
    console.log(
      `elicitation answers through the gateway: ${after[0]! - before[0]!} to instance 1, ${after[1]! - before[1]!} to instance 2`,
    );
    await through.client.close();
  });

  it('answers 404 to a session id it did not issue, altered or of another key, and 400 to an answer nobody awaits', async () => {
    const mine = await tasksKey();
    const other = await tasksKey();
    const { transport, client } = await connect(mine.key, () => ({ action: 'cancel' }));
    const real = transport.sessionId!;
    const [payload, mac] = real.split('.');
    const flipped = Buffer.from(payload!, 'base64url').toString().replace('"e":1', '"e":0');
    const post = (key: string, sessionId: string | undefined, body: object) =>
      fetch(MCP(), {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${key}`,
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
          ...(sessionId ? { 'Mcp-Session-Id': sessionId } : {}),
        },
        body: JSON.stringify(body),
      });
    const list = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
    expect((await post(mine.key, real, list)).status).toBe(200);
    for (const sessionId of [
      `${Buffer.from(flipped).toString('base64url')}.${mac}`,
      alterMac(real),
      'made-up',
      'x'.repeat(2000),
    ]) {
      const res = await post(mine.key, sessionId, list);
      expect(res.status).toBe(404);
      expect(((await res.json()) as { error: { code: number } }).error.code).toBe(-32001);
    }
    expect((await post(other.key, real, list)).status).toBe(404);
    // Without a session id the server stays stateless, as before.
    expect((await post(mine.key, undefined, list)).status).toBe(200);
    const stray = await post(mine.key, real, {
      jsonrpc: '2.0',
      id: randomUUID(),
      result: { action: 'accept', content: { confirm: true } },
    });
    expect(stray.status).toBe(400);
    // DELETE of the session (the SDK client's terminateSession) is 405, which the client takes as "nothing to end".
    await transport.terminateSession();
    await client.close();
  });
});

describe('a caller revoked while its call runs', () => {
  it('answers HTTP 401 with the bearer challenge, not a tool result', async () => {
    const { key, id: keyId } = await tasksKey();
    const ids = [await addTask(key, 'First'), await addTask(key, 'Held'), await addTask(key, 'Third')];
    // The batch of the first two edits waits on a row lock the test holds; meanwhile the key is
    // revoked (and every process's credential cache has expired), so the third call's REST request finds it gone.
    const holder = new pg.Client({ connectionString: stack.databaseUrl });
    await holder.connect();
    await holder.query('BEGIN');
    await holder.query('SELECT 1 FROM tasks.tasks WHERE id = $1 FOR UPDATE', [ids[1]]);
    const call = fetch(MCP(), {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${key}`,
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/call',
        params: {
          name: 'update_tasks',
          // update_tasks sends the edits as one batch request; auto_tag is no batch command, so the
          // third call is a REST call of its own, made after the batch and the revocation.
          arguments: {
            tasks: [
              { action: 'edit', id: ids[0], title: 'Edited' },
              { action: 'edit', id: ids[1], title: 'Edited' },
              { action: 'auto_tag', id: ids[2] },
            ],
          },
        },
      }),
    });
    await new Promise((r) => setTimeout(r, 500));
    await stack.admin('tasks', 'revoke-key', '--id', keyId);
    await new Promise((r) => setTimeout(r, 1500));
    await holder.query('COMMIT');
    await holder.end();
    const res = await call;
    const body = await res.text();
    expect({ status: res.status, body: res.status === 401 ? '' : body }).toMatchObject({ status: 401, body: '' });
    expect(res.headers.get('www-authenticate')).toMatch(
      /^Bearer error="invalid_token", error_description="[^"]+", resource_metadata="http:\/\/[^"]+\/\.well-known\/oauth-protected-resource\/mcp\/tasks"$/,
    );
    expect(JSON.parse(body)).toMatchObject({ error: 'invalid_token' });
    // The edits before the revocation were made; the one after it was not.
    const rows = new pg.Client({ connectionString: stack.databaseUrl });
    await rows.connect();
    const titles = new Map(
      (
        await rows.query<{ id: string; title: string }>('SELECT id, title FROM tasks.tasks WHERE id = ANY($1)', [ids])
      ).rows.map((r) => [r.id, r.title]),
    );
    await rows.end();
    expect(ids.map((id) => titles.get(id))).toEqual(['Edited', 'Edited', 'Third']);
    // And the next request of that key is the bearer check's own 401.
    const next = await fetch(MCP(), {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${key}`,
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
      },
      body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
    });
    expect(next.status).toBe(401);
  });
});

describe('Redis lost while a confirmation is awaited', () => {
  it('ends the call with nothing changed and a clear reason, and both instances keep serving', async () => {
    const { key } = await tasksKey();
    const id = await addTask(key, 'Survives the outage');
    const [a, b] = stack.instances.tasks;
    const route = (body: string) =>
      `http://127.0.0.1:${'method' in (JSON.parse(body) as object) ? a!.port : b!.port}/mcp/tasks`;
    const { client } = await connect(
      key,
      async () => {
        await redis.kill('SIGKILL');
        return { action: 'accept', content: { confirm: true } };
      },
      route,
    );
    client.onerror = () => {};
    const result = (await client.callTool(deleteCall(id))) as CallToolResult & { structuredContent: any };
    expect(result.isError).toBe(true);
    expect(result.structuredContent.status).toBe(503);
    expect(text(result)).toContain('nothing was changed');
    for (const instance of [a!, b!])
      expect((await fetch(`http://127.0.0.1:${instance.port}/healthz`)).status).toBe(200);
    expect(await taskStatus(key, id)).toBe(200);
    // A confirmation asked while Redis is down is refused at once, the same way.
    const again = (await client.callTool(deleteCall(id))) as CallToolResult & { structuredContent: any };
    expect(again.structuredContent.status).toBe(503);
    await client.close();
    redis = await startRedis({ port: redis.port });
    await waitForPort(redis.port);
  });
});

/** A v2 SDK client pinned to 2026-07-28; with `elicit` it answers input requests. `route` picks the URL of each POST. */
async function modern(
  key: string,
  elicit?: (message: string) => V2ElicitResult,
  route?: (body: string) => string,
): Promise<V2Client> {
  const client = new V2Client(
    { name: 'revisions-test', version: '1.0.0' },
    { capabilities: elicit ? { elicitation: { form: {} } } : {}, versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  if (elicit)
    client.setRequestHandler('elicitation/create', async (request) =>
      elicit((request.params as { message: string }).message),
    );
  await client.connect(
    new V2Transport(new URL(MCP()), {
      requestInit: { headers: { Authorization: `Bearer ${key}` } },
      ...(route
        ? {
            fetch: (url: string | URL, init?: RequestInit) =>
              fetch(typeof init?.body === 'string' && init.method === 'POST' ? route(init.body) : url, init),
          }
        : {}),
    }),
  );
  return client;
}

describe('MCP revisions', () => {
  it('serves a v2 SDK client on 2026-07-28: a fixed tool order with icons, cached privately, and a call', async () => {
    const { key } = await tasksKey();
    const client = await modern(key);
    expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    const first = await client.listTools();
    const again = await client.listTools();
    expect(again.tools.map((t) => t.name)).toEqual(first.tools.map((t) => t.name));
    expect(first.tools.length).toBeGreaterThan(0);
    for (const tool of first.tools)
      expect(tool.icons?.[0]).toMatchObject({
        src: `${stack.gateway}/account/tasks/icon.svg`,
        mimeType: 'image/svg+xml',
      });
    const icon = await fetch(first.tools[0]!.icons![0]!.src);
    expect(icon.status).toBe(200);
    expect(icon.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
    expect(await icon.text()).toContain('<svg');
    const id = await addTask(key, 'Read by a v2 client');
    const found = await client.callTool({ name: 'find_tasks', arguments: { id } });
    expect(found.isError).toBeFalsy();
    expect(JSON.stringify(found.structuredContent)).toContain('Read by a v2 client');
    await client.close();

    // The wire: resultType, ttlMs and cacheScope on the list, and the Mcp-Method header checked against the body.
    const meta = {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
      'io.modelcontextprotocol/clientCapabilities': {},
    };
    const post = (method: string, header: string) =>
      fetch(MCP(), {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${key}`,
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
          'MCP-Protocol-Version': '2026-07-28',
          'Mcp-Method': header,
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { _meta: meta } }),
      });
    const listed = (await (await post('tools/list', 'tools/list')).json()) as { result: Record<string, unknown> };
    expect(listed.result).toMatchObject({ resultType: 'complete', cacheScope: 'private' });
    expect(listed.result.ttlMs).toBeGreaterThan(0);
    const discovered = (await (await post('server/discover', 'server/discover')).json()) as {
      result: Record<string, any>;
    };
    expect(discovered.result.supportedVersions).toEqual(expect.arrayContaining(['2026-07-28']));
    const mismatch = (await (await post('tools/list', 'prompts/list')).json()) as { error?: { code: number } };
    expect(mismatch.error?.code).toBe(-32020);
  });

  it('serves a v1 SDK client on 2025-06-18 by its handshake: it lists and calls a tool', async () => {
    const { key } = await tasksKey();
    const client = new Client({ name: 'revisions-v1', version: '1.0.0' });
    // A client whose newest revision is 2025-06-18: its initialize asks for that one.
    const older = (url: string | URL, init?: RequestInit) =>
      fetch(
        url,
        typeof init?.body === 'string'
          ? { ...init, body: init.body.replace('"protocolVersion":"2025-11-25"', '"protocolVersion":"2025-06-18"') }
          : init,
      );
    const transport = new StreamableHTTPClientTransport(new URL(MCP()), {
      requestInit: { headers: { Authorization: `Bearer ${key}` } },
      fetch: older,
    });
    await client.connect(transport);
    expect(transport.protocolVersion).toBe('2025-06-18');
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toContain('find_tasks');
    const id = await addTask(key, 'Read by a v1 client');
    const found = (await client.callTool({ name: 'find_tasks', arguments: { id } })) as V2CallToolResult;
    expect(found.isError).toBeFalsy();
    await client.close();
  });

  it('confirms a delete by multi round-trip whose retry reaches the other instance; a decline is 409 not_confirmed', async () => {
    const { key } = await tasksKey();
    const [a, b] = stack.instances.tasks;
    // The first call goes to instance a, its retry (carrying inputResponses) to instance b.
    const route = (body: string) =>
      `http://127.0.0.1:${body.includes('"inputResponses"') ? b!.port : a!.port}/mcp/tasks`;
    const asked: string[] = [];
    const answers: V2ElicitResult[] = [{ action: 'accept', content: { confirm: true } }, { action: 'decline' }];
    const client = await modern(
      key,
      (message) => {
        asked.push(message);
        return answers.shift()!;
      },
      route,
    );
    const gone = await addTask(key, 'Cancel the gym membership');
    const confirmed = await client.callTool(deleteCall(gone));
    expect(confirmed.isError).toBeFalsy();
    expect(asked[0]).toContain('"Cancel the gym membership"');
    expect(asked[0]).toContain(gone);
    expect(await taskStatus(key, gone)).toBe(404);

    const kept = await addTask(key, 'Keep me');
    const declined = await client.callTool(deleteCall(kept));
    await expectKept(declined, key, kept);
    expect(JSON.stringify(declined.structuredContent)).toContain('not_confirmed');
    expect(answers).toHaveLength(0);
    await client.close();
  });

  it('refuses a retry whose requestState was altered or made for another call', async () => {
    const { key } = await tasksKey();
    const id = await addTask(key, 'Guarded');
    const other = await addTask(key, 'Other');
    const meta = {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
      'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } },
    };
    const call = async (taskId: string, extra: Record<string, unknown> = {}) =>
      (await (
        await fetch(MCP(), {
          method: 'POST',
          headers: {
            Authorization: `Bearer ${key}`,
            'Content-Type': 'application/json',
            Accept: 'application/json, text/event-stream',
            'MCP-Protocol-Version': '2026-07-28',
            'Mcp-Method': 'tools/call',
            'Mcp-Name': 'update_tasks',
          },
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: 1,
            method: 'tools/call',
            params: { ...deleteCall(taskId), _meta: meta, ...extra },
          }),
        })
      ).json()) as { result?: Record<string, any>; error?: { code: number } };
    const first = await call(id);
    expect(first.result).toMatchObject({ resultType: 'input_required' });
    const yes = { confirm: { action: 'accept', content: { confirm: true } } };
    // The state of the call on `id`, replayed to delete `other`: asked again, nothing deleted.
    const replayed = await call(other, { inputResponses: yes, requestState: first.result!.requestState });
    expect(replayed.result).toMatchObject({ resultType: 'input_required' });
    const altered = await call(id, {
      inputResponses: yes,
      requestState: alterMac(String(first.result!.requestState)),
    });
    expect(altered.error?.code).toBe(-32602);
    expect(await taskStatus(key, id)).toBe(200);
    expect(await taskStatus(key, other)).toBe(200);
  });
});
