import { createHash } from 'node:crypto';
import pg from 'pg';
// The callbacks passed to page.evaluate run in the browser.
/// <reference lib="dom" />
import { createServer, type Server } from 'node:http';
import { auth, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from './browser.js';
import { startStack, type Stack } from './stack.js';

const SCREENSHOT = process.env.CONSENT_SCREENSHOT || '/tmp/mcp-consent-tasks.png';

let stack: Stack;
let browser: Browser;
let page: Page;
let callback: Server;
let callbackUrl: string;
/** The redirects the callback received, newest last. */
const arrivals: URL[] = [];
/** What a person would see of the flow: each step's status or redirect, with secrets elided. */
const transcript: string[] = [];
const elide = (url: string) => url.replace(/(code|state)=[^&]+/g, '$1=…');

const email = `oauth-${Date.now()}@example.test`;
const password = 'a long enough passphrase';

/** An assistant's side of OAuth, as the SDK asks a client application to keep it. */
class Assistant implements OAuthClientProvider {
  info?: OAuthClientInformationMixed;
  saved?: OAuthTokens;
  verifier = '';
  authorizationUrl?: URL;
  constructor(readonly scope: string) {}
  get redirectUrl() {
    return callbackUrl;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'Test Assistant',
      redirect_uris: [callbackUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      scope: this.scope,
    };
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.info = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(v: string) {
    this.verifier = v;
  }
  codeVerifier() {
    return this.verifier;
  }
}

const mcpUrl = () => `${stack.gateway}/mcp/tasks`;

async function connect(assistant: Assistant): Promise<Client> {
  const client = new Client({ name: 'test-assistant', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(mcpUrl()), {
      authProvider: assistant,
      requestInit: { headers: { 'X-MCP-Toolsets': 'all' } },
    }),
  );
  return client;
}

/** tools/list with a raw bearer token: the status the MCP endpoint answers. */
const mcpStatus = (token: string, service = 'tasks') =>
  fetch(`${stack.gateway}/mcp/${service}`, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${token}`,
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  }).then((r) => r.status);

async function tokenRequest(form: Record<string, string>): Promise<{ status: number; body: any }> {
  const res = await fetch(`${stack.gateway}/oauth/tasks/token`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form),
  });
  return { status: res.status, body: await res.json() };
}

/** Runs the SDK's authorization until it needs the person, then clicks through it in Chromium. */
async function authorizeInBrowser(assistant: Assistant, decision: 'Allow' | 'Deny'): Promise<URL> {
  // The SDK asks for every scope the server lists unless told otherwise.
  expect(await auth(assistant, { serverUrl: mcpUrl(), scope: assistant.scope })).toBe('REDIRECT');
  const before = arrivals.length;
  const response = await page.goto(assistant.authorizationUrl!.href);
  transcript.push(
    `GET /oauth/tasks/authorize?client_id=…&code_challenge_method=S256&scope=${assistant.authorizationUrl!.searchParams.get('scope')} -> ${response?.status()}`,
  );
  if (await page.getByLabel('Password').isVisible()) {
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    transcript.push("POST /auth/tasks/login (the account page's own sign-in form) -> the authorize page reloads");
  }
  await page
    .getByRole('heading', { name: /Connect Test Assistant to your Tasks account/ })
    .waitFor({ timeout: 10_000 })
    .catch(async (err: unknown) => {
      await page.screenshot({ path: SCREENSHOT.replace(/\.png$/, '-failed.png') });
      throw new Error(
        `no consent page at ${page.url()}: ${await page.locator('#status').textContent()} (${String(err)})`,
      );
    });
  await page.screenshot({ path: SCREENSHOT });
  await page.getByRole('button', { name: decision }).click();
  await page.waitForURL((url) => url.href.startsWith(callbackUrl));
  const arrived = arrivals[arrivals.length - 1]!;
  expect(arrivals.length).toBe(before + 1);
  transcript.push(`POST /oauth/tasks/consent (${decision}) -> 302 ${elide(arrived.href)}`);
  return arrived;
}

async function authorized(assistant: Assistant): Promise<OAuthTokens> {
  const arrived = await authorizeInBrowser(assistant, 'Allow');
  expect(arrived.searchParams.get('state')).toBe(assistant.authorizationUrl!.searchParams.get('state'));
  expect(
    await auth(assistant, {
      serverUrl: mcpUrl(),
      scope: assistant.scope,
      authorizationCode: arrived.searchParams.get('code')!,
    }),
  ).toBe('AUTHORIZED');
  transcript.push(
    `POST /oauth/tasks/token grant_type=authorization_code -> 200 {access_token: oat_…, refresh_token: ort_…, expires_in: ${assistant.saved!.expires_in}, scope: ${assistant.saved!.scope}}`,
  );
  return assistant.saved!;
}

beforeAll(async () => {
  browser = await launchChromium();
  stack = await startStack({ tasks: { RATE_LIMIT_PER_MINUTE: '100000' } });
  await stack.adminWithStdin('tasks', password, 'create-account', '--email', email, '--password-stdin');
  callback = createServer((req, res) => {
    const url = new URL(req.url!, callbackUrl);
    if (url.pathname === '/callback') arrivals.push(url);
    res.writeHead(200, { 'Content-Type': 'text/plain' }).end('You can close this window.');
  });
  await new Promise<void>((resolve) => callback.listen(0, '127.0.0.1', resolve));
  callbackUrl = `http://127.0.0.1:${(callback.address() as { port: number }).port}/callback`;
  page = await (await browser.newContext()).newPage();
}, 120_000);

afterAll(async () => {
  process.stdout.write(
    `\nOAuth flow through the gateway (secrets elided):\n${transcript.map((l) => `  ${l}`).join('\n')}\n`,
  );
  await browser?.close();
  await new Promise<void>((resolve) => (callback ? callback.close(() => resolve()) : resolve()));
  await stack?.stop();
});

describe('connecting an assistant to tasks by URL alone (OAuth 2.1, consent in Chromium)', () => {
  const first = new Assistant('tasks:read');

  it("signs in on the authorize page, consents, and gets a token that lists only the consented scope's tools", async () => {
    const tokens = await authorized(first);
    expect(tokens.access_token).toMatch(/^oat_/);
    expect(tokens.expires_in).toBeLessThanOrEqual(3600);
    const client = await connect(first);
    const tools = (await client.listTools()).tools;
    expect(tools.length).toBeGreaterThan(0);
    expect(tools.every((t) => t.annotations?.readOnlyHint)).toBe(true);
    // Step-up: a tool beyond an OAuth token's scopes is HTTP 403 insufficient_scope, which the SDK
    // answers by asking for the wider scope; this assistant is not given it, so the call fails.
    await expect(client.callTool({ name: 'createTask', arguments: { title: 'Not consented' } })).rejects.toThrow(/403/);
    await client.close();
    // Only on its own service: meetings does not know the token.
    expect(await mcpStatus(tokens.access_token, 'meetings')).toBe(401);
  });

  it('rotates the refresh token, and a spent one used again ends the whole grant', async () => {
    const clientId = first.info!.client_id;
    const old = first.saved!;
    const rotated = await tokenRequest({
      grant_type: 'refresh_token',
      refresh_token: old.refresh_token!,
      client_id: clientId,
    });
    expect(rotated.status).toBe(200);
    expect(rotated.body.refresh_token).not.toBe(old.refresh_token);
    transcript.push('POST /oauth/tasks/token grant_type=refresh_token -> 200 (new access and refresh token)');
    expect(await mcpStatus(rotated.body.access_token)).toBe(200);
    // Within the 30 s grace window a second refresh (here two at once) gets the very same pair.
    const again = await Promise.all(
      [1, 2].map(() =>
        tokenRequest({ grant_type: 'refresh_token', refresh_token: old.refresh_token!, client_id: clientId }),
      ),
    );
    for (const r of again) {
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({
        access_token: rotated.body.access_token,
        refresh_token: rotated.body.refresh_token,
      });
      expect(r.body.expires_in).toBeGreaterThan(0);
    }
    // Past the window (moved back in the database rather than waited for), reuse ends the grant as before.
    const db = new pg.Client({ connectionString: stack.databaseUrl });
    await db.connect();
    await db.query(`update tasks.oauth_tokens set revoked_at = now() - interval '31 seconds' where token_hash = $1`, [
      createHash('sha256').update(old.refresh_token!).digest(),
    ]);
    await db.end();
    const replay = await tokenRequest({
      grant_type: 'refresh_token',
      refresh_token: old.refresh_token!,
      client_id: clientId,
    });
    expect(replay).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    transcript.push('POST /oauth/tasks/token with the spent refresh token -> 400 invalid_grant (the grant ends)');
    await expectRefusedSoon(rotated.body.access_token);
  });

  it('sends a Deny back as access_denied', async () => {
    const arrived = await authorizeInBrowser(new Assistant('tasks:read tasks:write'), 'Deny');
    expect(arrived.searchParams.get('error')).toBe('access_denied');
  });

  it('lists the app under Connected apps, and Disconnect ends its token at once', async () => {
    const second = new Assistant('tasks:read tasks:write');
    const tokens = await authorized(second);
    expect(await mcpStatus(tokens.access_token)).toBe(200);
    await page.goto(`${stack.gateway}/account/tasks`);
    const row = page.getByRole('row', { name: /Test Assistant/ });
    await row.waitFor();
    expect(await row.textContent()).toContain('tasks:read, tasks:write');
    await page.screenshot({ path: SCREENSHOT.replace(/\.png$/, '-connected-apps.png'), fullPage: true });
    await page.getByRole('button', { name: 'Disconnect Test Assistant' }).click();
    await page.getByRole('button', { name: 'Confirm disconnect' }).click();
    await page.getByText('No app is connected.').waitFor();
    transcript.push('DELETE /auth/tasks/apps/{id} ("Disconnect" on /account/tasks) -> 200');
    await expectRefusedSoon(tokens.access_token);
    expect(
      (
        await tokenRequest({
          grant_type: 'refresh_token',
          refresh_token: tokens.refresh_token!,
          client_id: second.info!.client_id,
        })
      ).body.error,
    ).toBe('invalid_grant');
  });

  it('revokes through the revocation endpoint', async () => {
    const third = new Assistant('tasks:read');
    const tokens = await authorized(third);
    const res = await fetch(`${stack.gateway}/oauth/tasks/revoke`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: tokens.refresh_token!, client_id: third.info!.client_id }),
    });
    expect(res.status).toBe(200);
    transcript.push('POST /oauth/tasks/revoke (refresh token) -> 200');
    await expectRefusedSoon(tokens.access_token);
  });

  it('refuses redirect URIs that are neither https nor local, and a code with the wrong PKCE verifier', async () => {
    const bad = await fetch(`${stack.gateway}/oauth/tasks/register`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        client_name: 'Sneaky',
        redirect_uris: ['http://evil.example/cb'],
        token_endpoint_auth_method: 'none',
      }),
    });
    expect(bad.status).toBe(400);
    expect((await bad.json()).error).toBe('invalid_client_metadata');
    const fourth = new Assistant('tasks:read');
    const arrived = await authorizeInBrowser(fourth, 'Allow');
    const wrong = await tokenRequest({
      grant_type: 'authorization_code',
      code: arrived.searchParams.get('code')!,
      code_verifier: 'x'.repeat(43),
      redirect_uri: callbackUrl,
      client_id: fourth.info!.client_id,
    });
    expect(wrong).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
  });
});

/** A revoked credential is refused by every process within a second (the credential cache). */
async function expectRefusedSoon(token: string): Promise<void> {
  const deadline = Date.now() + 2000;
  let status = await mcpStatus(token);
  while (status !== 401 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    status = await mcpStatus(token);
  }
  expect(status).toBe(401);
}
