import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { Client as Pg } from 'pg';
import { startReceiver, type Receiver } from '@app/devstack';
import { oauthClient, type OAuthClient } from './oauth-flow.js';
import { startStack, type Stack } from './stack.js';

/**
 * OAuth tokens stay with their server (RFC 8707), grants end, and an authorize error never
 * redirects (RFC 9700 4.11.2): the tasks service through the gateway, as an assistant and a
 * browser reach it.
 */
let stack: Stack;
let receiver: Receiver;
const RELAXED = {
  RATE_LIMIT_PER_MINUTE: '100000',
  RATE_LIMIT_READS_PER_MINUTE: '100000',
  RATE_LIMIT_WRITES_PER_MINUTE: '100000',
};

beforeAll(async () => {
  stack = await startStack({ tasks: { ...RELAXED, WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_RETRY_BASE_MS: '200' } });
  receiver = await startReceiver();
}, 120_000);
afterAll(async () => {
  await pg?.end();
  await receiver?.close();
  await stack?.stop();
});

/** A credential cache entry lives up to a second (DESIGN: a revocation reaches every process within 1 s). */
const pastCache = () => new Promise((r) => setTimeout(r, 1200));

async function signedIn(): Promise<{ accountId: string; cookie: string }> {
  const { accountId } = await stack.admin(
    'tasks',
    'create-account',
    '--email',
    `oauth-${Math.random().toString(36).slice(2)}@example.test`,
  );
  const { cookie } = await stack.admin('tasks', 'create-session', '--account', accountId);
  return { accountId, cookie: cookie as string };
}

/** The tasks schema as an operator sees it: one connection for the whole file. */
let pg: Pg | undefined;
async function sql<T = Record<string, unknown>>(text: string, params: unknown[] = []): Promise<T[]> {
  if (!pg) {
    pg = new Pg({ connectionString: stack.databaseUrl, options: '-c search_path=tasks' });
    await pg.connect();
  }
  return (await pg.query(text, params)).rows as T[];
}

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });
const mcpInitialize = (token: string) =>
  fetch(`${stack.gateway}/mcp/tasks`, {
    method: 'POST',
    headers: { ...bearer(token), 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    }),
  });

describe('the resource a token is for (RFC 8707)', () => {
  let client: OAuthClient;
  beforeAll(async () => {
    client = await oauthClient(stack.gateway, 'tasks');
  });

  it.each([
    ["another host's MCP path", 'https://attacker.example/mcp/tasks'],
    ['another service of this host', () => `${stack.gateway}/mcp/meetings`],
    ['this MCP URL with a trailing slash', () => `${stack.gateway}/mcp/tasks/`],
    ["this host's REST API", () => `${stack.gateway}/api/v1`],
  ])('refuses %s with invalid_target on a page, signed in or out, and redirects nowhere', async (_name, resource) => {
    const target = typeof resource === 'function' ? resource() : resource;
    const { cookie } = await signedIn();
    for (const who of [undefined, cookie]) {
      const answer = await client.authorize({ resource: target }, who);
      expect(answer.status).toBe(400);
      expect(answer.location).toBeNull();
      expect(answer.html).toContain('invalid_target');
      expect(answer.html).not.toContain('name="request"');
    }
  });

  it('shows an unknown scope as a page before anyone signs in, instead of sending the browser to the registered URI', async () => {
    const answer = await client.authorize({ scope: 'tasks:read admin' });
    expect(answer.status).toBe(400);
    expect(answer.location).toBeNull();
    expect(answer.html).toContain('invalid_scope');
  });

  it("binds the grant to this server's MCP URL, names it on the consent page, and serves the token at /mcp and the REST API", async () => {
    const { cookie } = await signedIn();
    const own = `${stack.gateway}/mcp/tasks`;
    const { consentHtml, code, verifier } = await client.consent(cookie, { resource: own });
    expect(consentHtml).toContain(own);
    // The token endpoint holds the code to the same resource.
    const elsewhere = await client.token({
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      redirect_uri: client.redirectUri,
      resource: 'https://attacker.example/mcp/tasks',
    });
    expect(elsewhere).toMatchObject({ status: 400, body: { error: 'invalid_target' } });

    const tokens = await client.connect(cookie);
    expect(tokens.expires_in).toBeGreaterThan(0);
    const [grant] = await sql<{ resource: string; days: number }>(
      `select resource, (extract(epoch from expires_at - created_at) / 86400)::float8 as days from oauth_grants where client_id = $1 order by created_at desc limit 1`,
      [client.clientId],
    );
    expect(grant).toEqual({ resource: own, days: 90 });
    expect((await mcpInitialize(tokens.access_token)).status).toBe(200);
    expect((await fetch(`${stack.gateway}/api/v1/tasks`, { headers: bearer(tokens.access_token) })).status).toBe(200);
  });

  it('refuses at /mcp and at the REST API a token whose grant is bound to another server', async () => {
    const { cookie } = await signedIn();
    const tokens = await client.connect(cookie);
    expect((await mcpInitialize(tokens.access_token)).status).toBe(200);
    // As a token obtained before the rule was exact: its grant names another host's /mcp/tasks.
    await sql(`update oauth_grants set resource = 'https://attacker.example/mcp/tasks' where client_id = $1`, [
      client.clientId,
    ]);
    await pastCache();
    const mcp = await mcpInitialize(tokens.access_token);
    expect(mcp.status).toBe(401);
    expect(mcp.headers.get('www-authenticate')).toContain(
      `resource_metadata="${stack.gateway}/.well-known/oauth-protected-resource/mcp/tasks"`,
    );
    const rest = await fetch(`${stack.gateway}/api/v1/tasks`, { headers: bearer(tokens.access_token) });
    expect(rest.status).toBe(401);
  });
});

describe('authorization responses name their issuer (RFC 9207)', () => {
  it("carries iss, equal to the metadata's issuer, on the code redirect and on a Deny", async () => {
    const metadata = (await (
      await fetch(`${stack.gateway}/.well-known/oauth-authorization-server/oauth/tasks`)
    ).json()) as Record<string, unknown>;
    expect(metadata).toMatchObject({
      issuer: `${stack.gateway}/oauth/tasks`,
      authorization_response_iss_parameter_supported: true,
    });
    const client = await oauthClient(stack.gateway, 'tasks');
    const { cookie } = await signedIn();
    const allowed = (await client.answer(cookie, 'allow')).location;
    expect(allowed.searchParams.get('code')).toBeTruthy();
    expect(allowed.searchParams.get('iss')).toBe(metadata.issuer);
    const denied = (await client.answer(cookie, 'deny')).location;
    expect(denied.searchParams.get('error')).toBe('access_denied');
    expect(denied.searchParams.get('iss')).toBe(metadata.issuer);
  });
});

describe('tool calls made with an OAuth token (no PUBLIC_URL: the origin is the one the request came by)', () => {
  /** The official SDK client with the token as its bearer header, as an assistant holds it once connected. */
  async function assistant(origin: string, token: string): Promise<Client> {
    const client = new Client({ name: 'oauth-assistant', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${origin}/mcp/tasks?toolsets=all`), {
        requestInit: { headers: bearer(token) },
      }),
    );
    return client;
  }
  const call = (client: Client, name: string, args: Record<string, unknown> = {}) =>
    client.callTool({ name, arguments: args }) as Promise<CallToolResult>;

  it.each(['127.0.0.1', 'localhost'])('work through the gateway reached as %s', async (host) => {
    const origin = `http://${host}:${new URL(stack.gateway).port}`;
    const { cookie } = await signedIn();
    const tokens = await (await oauthClient(origin, 'tasks')).connect(cookie);
    const client = await assistant(origin, tokens.access_token);
    const created = await call(client, 'createTask', { title: `Made by an assistant via ${host}` });
    expect(created.isError).toBeFalsy();
    const listed = await call(client, 'listTasks');
    expect((listed.structuredContent as { items: Array<{ title: string }> }).items.map((t) => t.title)).toEqual([
      `Made by an assistant via ${host}`,
    ]);
    await client.close();
  });

  it('still refuses at /mcp a token bound to the same service at another origin', async () => {
    const { cookie } = await signedIn();
    const tokens = await (await oauthClient(stack.gateway, 'tasks')).connect(cookie);
    const elsewhere = `http://localhost:${new URL(stack.gateway).port}`;
    const res = await fetch(`${elsewhere}/mcp/tasks?toolsets=all`, {
      method: 'POST',
      headers: {
        ...bearer(tokens.access_token),
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'listTasks', arguments: {} },
      }),
    });
    expect(res.status).toBe(401);
  });

  /** One tools/call as JSON-RPC over HTTP, as an assistant sends it. */
  const callTool = (token: string, toolsets: string, name: string, args: Record<string, unknown>) =>
    fetch(`${stack.gateway}/mcp/tasks?toolsets=${toolsets}`, {
      method: 'POST',
      headers: { ...bearer(token), 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
    });

  it('asks for the scope a tool needs with a 403 insufficient_scope challenge (step-up), changing nothing', async () => {
    const { cookie } = await signedIn();
    const tokens = await (await oauthClient(stack.gateway, 'tasks')).connect(cookie, { scope: 'tasks:read' });
    for (const [toolsets, name, args] of [
      ['all', 'createTask', { title: 'Not allowed' }],
      ['default', 'add_tasks', { tasks: [{ title: 'Not allowed' }] }],
    ] as const) {
      const res = await callTool(tokens.access_token, toolsets, name, args);
      expect(res.status).toBe(403);
      const challenge = res.headers.get('www-authenticate') ?? '';
      expect(challenge).toMatch(/^Bearer error="insufficient_scope"/);
      expect(challenge).toContain('scope="tasks:write"');
      expect(challenge).toContain(
        `resource_metadata="${stack.gateway}/.well-known/oauth-protected-resource/mcp/tasks"`,
      );
    }
    // What the token may do still works, and nothing was created.
    const reader = await assistant(stack.gateway, tokens.access_token);
    const listed = await call(reader, 'listTasks');
    expect(listed.isError).toBeFalsy();
    expect((listed.structuredContent as { items: unknown[] }).items).toEqual([]);
    await reader.close();
  });

  it('works once the user consents to the scope the challenge named (step-up, then the same call)', async () => {
    const { cookie } = await signedIn();
    const client = await oauthClient(stack.gateway, 'tasks');
    const narrow = await client.connect(cookie, { scope: 'tasks:read' });
    const args = { title: 'Made after step-up' };
    const refused = await callTool(narrow.access_token, 'all', 'createTask', args);
    expect(refused.status).toBe(403);
    const needed = /scope="([^"]+)"/.exec(refused.headers.get('www-authenticate') ?? '')?.[1];
    expect(needed).toBe('tasks:write');
    // The assistant authorizes again with what it had and what it was told it needs; the user allows.
    const wider = await client.connect(cookie, { scope: `${narrow.scope} ${needed}` });
    expect(wider.scope.split(' ').sort()).toEqual(['tasks:read', 'tasks:write']);
    const called = await callTool(wider.access_token, 'all', 'createTask', args);
    expect(called.status).toBe(200);
    const { result } = (await called.json()) as { result: CallToolResult };
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ item: { title: 'Made after step-up' } });
    const listed = (await (await fetch(`${stack.gateway}/api/v1/tasks`, { headers: { Cookie: cookie } })).json()) as {
      items: Array<{ title: string }>;
    };
    expect(listed.items.map((t) => t.title)).toEqual(['Made after step-up']);
  });
});

describe('grants end', () => {
  let client: OAuthClient;
  beforeAll(async () => {
    client = await oauthClient(stack.gateway, 'tasks');
  });

  it('90 days after consent: the access token and the refresh token stop working', async () => {
    const { cookie, accountId } = await signedIn();
    const tokens = await client.connect(cookie);
    await sql(`update oauth_grants set expires_at = now() - interval '1 second' where account_id = $1`, [accountId]);
    await pastCache();
    expect((await fetch(`${stack.gateway}/api/v1/tasks`, { headers: bearer(tokens.access_token) })).status).toBe(401);
    const refreshed = await client.token({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token });
    expect(refreshed).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
  });

  it("on a password reset, with the account's sessions", async () => {
    const { cookie, accountId } = await signedIn();
    const tokens = await client.connect(cookie);
    const reset = await stack.adminWithStdin('tasks', 'a new long password\n', 'set-password', '--account', accountId);
    expect(reset).toMatchObject({ passwordSet: true, sessionsRevoked: 1, grantsRevoked: 1 });
    await pastCache();
    expect((await fetch(`${stack.gateway}/api/v1/tasks`, { headers: bearer(tokens.access_token) })).status).toBe(401);
    expect((await client.token({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token })).body.error).toBe(
      'invalid_grant',
    );
    expect((await fetch(`${stack.gateway}/auth/tasks/me`, { headers: { Cookie: cookie } })).status).toBe(401);
  });

  it('on a password reset, a code issued before it cannot be exchanged after it', async () => {
    const { cookie, accountId } = await signedIn();
    const { code, verifier } = await client.consent(cookie);
    await stack.adminWithStdin('tasks', 'a new long password\n', 'set-password', '--account', accountId);
    const exchanged = await client.token({
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      redirect_uri: client.redirectUri,
    });
    expect(exchanged).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
  });

  it("not when another account disconnects its grant id: the owner's tokens keep working", async () => {
    const owner = await signedIn();
    const tokens = await client.connect(owner.cookie);
    const [grant] = await sql<{ id: string }>('select id from oauth_grants where account_id = $1', [owner.accountId]);
    const other = await signedIn();
    const disconnect = await fetch(`${stack.gateway}/auth/tasks/apps/${grant!.id}`, {
      method: 'DELETE',
      headers: { Cookie: other.cookie },
    });
    expect(disconnect.status).toBe(404);
    await pastCache();
    expect((await fetch(`${stack.gateway}/api/v1/tasks`, { headers: bearer(tokens.access_token) })).status).toBe(200);
    expect((await client.token({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token })).status).toBe(200);
  });
});

describe('a webhook created with an OAuth token', () => {
  it('fires while its grant holds the read scope, and stops when the app is disconnected', async () => {
    const { cookie } = await signedIn();
    const client = await oauthClient(stack.gateway, 'tasks');
    const tokens = await client.connect(cookie, { scope: 'tasks:read tasks:write webhooks' });
    const created = await fetch(`${stack.gateway}/api/v1/webhooks`, {
      method: 'POST',
      headers: { ...bearer(tokens.access_token), 'Content-Type': 'application/json' },
      body: JSON.stringify({ url: receiver.url, events: ['task.created'] }),
    });
    expect(created.status).toBe(201);
    const post = (title: string) =>
      fetch(`${stack.gateway}/api/v1/tasks`, {
        method: 'POST',
        headers: { Cookie: cookie, 'Content-Type': 'application/json' },
        body: JSON.stringify({ title }),
      });
    const first = (await (await post('seen by the app')).json()) as { item: { id: string } };
    await receiver.waitFor((all) => all.some((r) => r.event.data?.id === first.item.id), 10_000);

    const apps = (await (await fetch(`${stack.gateway}/auth/tasks/apps`, { headers: { Cookie: cookie } })).json()) as {
      items: Array<{ id: string }>;
    };
    expect(
      (
        await fetch(`${stack.gateway}/auth/tasks/apps/${apps.items[0]!.id}`, {
          method: 'DELETE',
          headers: { Cookie: cookie },
        })
      ).status,
    ).toBe(200);
    const second = (await (await post('not for a disconnected app')).json()) as { item: { id: string } };
    const third = (await (await post('nor this one')).json()) as { item: { id: string } };
    await new Promise((r) => setTimeout(r, 3000));
    const ids = receiver.received.map((r) => r.event.data?.id);
    expect(ids).not.toContain(second.item.id);
    expect(ids).not.toContain(third.item.id);
  });
});
