import { request as httpsRequest } from 'node:https';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startTlsTerminator, type TlsTerminator } from '@app/devstack';
import { oauthClient } from './oauth-flow.js';
import { SERVICES, startStack, type Stack } from './stack.js';

/**
 * The production shape, rehearsed on this machine (DESIGN.md "Production shape"): an outer nginx
 * terminating TLS with a certificate made for the run (the Ingress's role) in front of the gateway,
 * which trusts X-Forwarded-For from that hop only (TRUSTED_PROXIES); two instances of each service
 * trusting one hop (TRUST_PROXY=1), PUBLIC_URL https, COOKIE_SECURE=always, private webhook targets
 * refused. Clients connect from distinct loopback addresses (127.0.x.y), as distinct machines do.
 */
let stack: Stack;
let edge: TlsTerminator;
let dir: string;
let origin: string;
const log: string[] = [];
const say = (line: string) => {
  log.push(line);
};

beforeAll(async () => {
  const port = await freePort();
  origin = `https://localhost:${port}`;
  const production = {
    PUBLIC_URL: origin,
    ALLOWED_ORIGINS: origin,
    COOKIE_SECURE: 'always',
    TRUST_PROXY: '1',
    WEBHOOK_ALLOW_PRIVATE: '0',
    SIGNUP: 'closed',
  };
  stack = await startStack(Object.fromEntries(SERVICES.map((svc) => [svc, production])), {
    replicas: 2,
    gatewayVars: { TRUSTED_PROXIES: '127.0.0.1/32' },
  });
  dir = mkdtempSync(join(tmpdir(), 'ingress-'));
  const started = await startTlsTerminator(dir, { port, upstream: new URL(stack.gateway).host });
  if (!started) throw new Error('nginx or openssl is not installed');
  edge = started;
  say(
    `ingress ${origin} (TLS, certificate made for this run) -> gateway ${stack.gateway} (TRUSTED_PROXIES=127.0.0.1/32) -> 2 instances of each service`,
  );
}, 180_000);
afterAll(async () => {
  await edge?.stop();
  await stack?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
  process.stdout.write(`\nproduction rehearsal:\n${log.map((l) => `  ${l}`).join('\n')}\n`);
});

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** One https request through the ingress from `from` (a loopback address), trusting only the run's certificate. */
function send(
  from: string,
  path: string,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const url = new URL(path, origin);
    const req = httpsRequest(
      {
        host: '127.0.0.1',
        servername: 'localhost',
        port: url.port,
        path: `${url.pathname}${url.search}`,
        method: init.method ?? 'GET',
        localAddress: from,
        ca: edge.certificate,
        agent: false,
        headers: { Host: url.host, ...init.headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(init.body);
  });
}

/** `send` as a fetch, for the OAuth client. */
const fetchFrom =
  (from: string) =>
  async (url: string, init: RequestInit = {}): Promise<Response> => {
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((value, name) => (headers[name] = value));
    const body =
      init.body instanceof URLSearchParams
        ? init.body.toString()
        : typeof init.body === 'string'
          ? init.body
          : undefined;
    const answer = await send(from, url, { method: init.method ?? 'GET', headers, body });
    const out = new Headers();
    for (const [name, value] of Object.entries(answer.headers))
      if (value !== undefined) out.set(name, Array.isArray(value) ? value.join(', ') : value);
    return new Response([204, 205, 304].includes(answer.status) ? null : answer.text, {
      status: answer.status,
      headers: out,
    });
  };

const json = { 'Content-Type': 'application/json' };
const login = (from: string, email: string, password: string, headers: Record<string, string> = {}) =>
  send(from, '/auth/tasks/login', {
    method: 'POST',
    headers: { ...json, ...headers },
    body: JSON.stringify({ email, password }),
  });

describe('the production rehearsal: a TLS ingress in front of the gateway, two instances of each service', () => {
  let email: string;
  let accountId: string;
  const PASSWORD = 'correct horse battery';
  beforeAll(async () => {
    email = `rehearsal-${Math.random().toString(36).slice(2)}@example.test`;
    ({ accountId } = await stack.adminWithStdin(
      'tasks',
      `${PASSWORD}\n`,
      'create-account',
      '--email',
      email,
      '--password-stdin',
    ));
  });

  it('gives each client its own sign-in budget: 101 failures from one address are refused there only, whatever X-Forwarded-For it forges', async () => {
    const attacker = '127.0.2.1';
    const statuses: number[] = [];
    // Distinct emails (each has its own 10-in-15-minutes budget), so only the address's budget counts.
    for (let i = 0; i < 101; i += 5) {
      const batch = Array.from({ length: Math.min(5, 101 - i) }, (_, j) =>
        login(attacker, `nobody-${i + j}-${Math.random().toString(36).slice(2)}@example.test`, 'wrong password'),
      );
      statuses.push(...(await Promise.all(batch)).map((r) => r.status));
    }
    expect(statuses.filter((s) => s === 401)).toHaveLength(100);
    expect(statuses.filter((s) => s === 429)).toHaveLength(1);
    const blocked = await login(attacker, email, PASSWORD);
    expect(blocked.status).toBe(429);
    expect(blocked.headers['retry-after']).toMatch(/^\d+$/);
    // A forged X-Forwarded-For lies left of what the ingress appended: the gateway skips it.
    for (const forged of ['203.0.113.9', '127.0.3.1', '127.0.0.1, 203.0.113.9']) {
      expect((await login(attacker, email, PASSWORD, { 'X-Forwarded-For': forged })).status).toBe(429);
    }
    // Another address signs in; claiming the blocked one in its own header changes nothing either.
    const other = await login('127.0.3.1', email, PASSWORD, { 'X-Forwarded-For': attacker });
    expect(other.status).toBe(200);
    say(
      `101 failed sign-ins from 127.0.2.1: ${statuses.filter((s) => s === 401).length} x 401 then 429 (Retry-After ${String(blocked.headers['retry-after'])} s); forged X-Forwarded-For from it: 429; 127.0.3.1 signs in: ${other.status}`,
    );
  }, 180_000);

  it('sets the session cookie as __Host- and Secure, and reads only that name', async () => {
    const signedIn = await login('127.0.4.1', email, PASSWORD);
    expect(signedIn.status).toBe(200);
    const cookie = String(signedIn.headers['set-cookie']);
    expect(cookie).toMatch(/^__Host-tasks_sid=[^;]+; .*Secure/);
    expect(cookie).toContain('HttpOnly');
    expect(cookie).toContain('Path=/');
    expect(cookie).not.toContain('Domain=');
    const token = /^__Host-tasks_sid=([^;]+)/.exec(cookie)![1]!;
    expect(
      (await send('127.0.4.1', '/auth/tasks/me', { headers: { Cookie: `__Host-tasks_sid=${token}` } })).status,
    ).toBe(200);
    // The plain name, as a sibling subdomain could plant it: not a session here.
    expect((await send('127.0.4.1', '/auth/tasks/me', { headers: { Cookie: `tasks_sid=${token}` } })).status).toBe(401);
    say(
      `sign-in cookie: ${cookie
        .split(';')
        .slice(1)
        .map((p) => p.trim())
        .join('; ')} (name __Host-tasks_sid; the plain tasks_sid name: 401)`,
    );
  });

  it('names the https origin in OAuth metadata and WWW-Authenticate whatever Host is sent', async () => {
    for (const service of SERVICES) {
      for (const host of [new URL(origin).host, 'evil.example', 'localhost:1']) {
        const metadata = await send('127.0.5.1', `/.well-known/oauth-protected-resource/mcp/${service}`, {
          headers: { Host: host },
        });
        expect(JSON.parse(metadata.text)).toMatchObject({
          resource: `${origin}/mcp/${service}`,
          authorization_servers: [`${origin}/oauth/${service}`],
        });
        const server = await send('127.0.5.1', `/.well-known/oauth-authorization-server/oauth/${service}`, {
          headers: { Host: host },
        });
        expect(JSON.parse(server.text)).toMatchObject({
          issuer: `${origin}/oauth/${service}`,
          token_endpoint: `${origin}/oauth/${service}/token`,
        });
        const challenge = await send('127.0.5.1', `/mcp/${service}`, {
          method: 'POST',
          headers: { ...json, Host: host, Accept: 'application/json, text/event-stream' },
          body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
        });
        expect(challenge.status).toBe(401);
        expect(challenge.headers['www-authenticate']).toContain(
          `resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp/${service}"`,
        );
      }
    }
    say(`metadata and WWW-Authenticate with Host evil.example: ${origin}/...`);
  });

  it('gives no code to an OAuth flow for a foreign resource, and a token to one for its own', async () => {
    const browser = '127.0.6.1';
    const cookie = String((await login(browser, email, PASSWORD)).headers['set-cookie']).split(';')[0]!;
    const client = await oauthClient(origin, 'tasks', fetchFrom(browser));
    const foreign = await client.authorize({ resource: 'https://attacker.example/mcp/tasks' }, cookie);
    expect(foreign.status).toBe(400);
    expect(foreign.location).toBeNull();
    expect(foreign.html).toContain('invalid_target');
    expect(foreign.html).not.toContain('name="request"');
    const tokens = await client.connect(cookie, { resource: `${origin}/mcp/tasks` });
    const mcp = await send(browser, '/mcp/tasks', {
      method: 'POST',
      headers: {
        ...json,
        Accept: 'application/json, text/event-stream',
        Authorization: `Bearer ${tokens.access_token}`,
        Origin: origin,
      },
      body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
    });
    expect(mcp.status).toBe(200);
    const foreignOrigin = await send(browser, '/mcp/tasks', {
      method: 'POST',
      headers: {
        ...json,
        Accept: 'application/json, text/event-stream',
        Authorization: `Bearer ${tokens.access_token}`,
        Origin: 'https://evil.example',
      },
      body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
    });
    expect(foreignOrigin.status).toBe(403);
    say(
      `OAuth authorize with resource=https://attacker.example/mcp/tasks: ${foreign.status}, no Location, page says invalid_target; with ${origin}/mcp/tasks: a token, /mcp tools/list ${mcp.status}; Origin https://evil.example: ${foreignOrigin.status}`,
    );
  });

  it('refuses private webhook targets', async () => {
    const { key } = await stack.admin('tasks', 'create-key', '--account', accountId);
    for (const url of [
      'http://127.0.0.1:9/hook',
      'http://10.0.0.8/hook',
      'http://169.254.169.254/latest',
      'http://[::1]/hook',
      'http://localhost:9/hook',
    ]) {
      const res = await send('127.0.7.1', '/api/v1/webhooks', {
        method: 'POST',
        headers: { ...json, Authorization: `Bearer ${key as string}` },
        body: JSON.stringify({ url, events: ['task.created'] }),
      });
      expect([url, res.status]).toEqual([url, 400]);
    }
    say('webhook targets 127.0.0.1, 10.0.0.8, 169.254.169.254, [::1], localhost: 400');
  });
});
