import { Client as PgClient } from 'pg';
import { startStack, type Service, type Stack } from './stack.js';

/**
 * DESIGN "Meetings: connected": a meetings account connects a tasks account by tasks' own OAuth,
 * meetings being its client by the Client ID Metadata Document it serves. Real tasks and meetings
 * processes behind real nginx; the browser's part (following redirects, Allow on the consent
 * page) is played with fetch and both services' session cookies.
 */
let stack: Stack;
let pg: PgClient;
// Each test signs people in with the admin command (a process per call): slow on a busy machine.
jest.setTimeout(120_000);

beforeAll(async () => {
  // Meetings' document is on the gateway's loopback origin: tasks may fetch it (as tests and a dev stack allow).
  stack = await startStack({ tasks: { OAUTH_CIMD_ALLOW_PRIVATE: '1' } });
  pg = new PgClient({ connectionString: stack.databaseUrl });
  await pg.connect();
}, 120_000);
afterAll(async () => {
  await pg?.end();
  await stack?.stop();
});

async function signedIn(service: Service): Promise<{ accountId: string; cookie: string }> {
  const email = `connect-${Math.random().toString(36).slice(2)}@example.test`;
  const { accountId } = await stack.admin(service, 'create-account', '--email', email);
  const { cookie } = await stack.admin(service, 'create-session', '--account', accountId);
  return { accountId, cookie: cookie as string };
}

/** A person signed in to both services in one browser: the cookie header it sends to the gateway. */
async function browser() {
  const meetings = await signedIn('meetings');
  const tasks = await signedIn('tasks');
  return { meetings, tasks, cookie: `${meetings.cookie}; ${tasks.cookie}` };
}

const get = (path: string, cookie: string) =>
  fetch(`${stack.gateway}${path}`, { redirect: 'manual', headers: { Cookie: cookie } });

/** Start, then tasks' consent answered with `decision`: where tasks sends the browser back. */
async function consentTo(cookie: string, decision: 'allow' | 'deny'): Promise<URL> {
  const start = await get('/api/me/connections/tasks/start', cookie);
  expect(start.status).toBe(302);
  const authorize = new URL(start.headers.get('location')!);
  const page = await fetch(authorize, { redirect: 'manual', headers: { Cookie: cookie } });
  const html = await page.text();
  expect(page.status).toBe(200);
  expect(html).toContain('Meetings');
  const request = /name="request" value="([^"]+)"/.exec(html)![1]!;
  const answer = await fetch(`${stack.gateway}/oauth/tasks/consent`, {
    method: 'POST',
    redirect: 'manual',
    headers: { Cookie: cookie, 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ request, decision }),
  });
  expect(answer.status).toBe(302);
  return new URL(answer.headers.get('location')!);
}

/** The whole flow: start, Allow, the callback. */
async function connect(cookie: string): Promise<void> {
  const back = await consentTo(cookie, 'allow');
  const callback = await get(`${back.pathname}${back.search}`, cookie);
  expect(callback.status).toBe(302);
  expect(callback.headers.get('location')).toBe('/account/meetings?tasks=connected');
}

const connections = async (cookie: string) => (await get('/api/me/connections', cookie)).json();
const connectedApps = async (cookie: string) =>
  ((await (await get('/auth/tasks/apps', cookie)).json()) as { items: Array<{ clientId: string; clientName: string }> })
    .items;

it('serves its Client ID Metadata Document at a stable URL, without authentication', async () => {
  const res = await fetch(`${stack.gateway}/api/me/connections/tasks/client.json`);
  expect(res.status).toBe(200);
  expect(res.headers.get('cache-control')).toContain('max-age=3600');
  expect(await res.json()).toEqual({
    client_id: `${stack.gateway}/api/me/connections/tasks/client.json`,
    client_name: 'Meetings',
    client_uri: `${stack.gateway}/account/meetings`,
    redirect_uris: [`${stack.gateway}/api/me/connections/tasks/callback`],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
    scope: 'tasks:read tasks:write',
  });
});

it("start redirects to tasks' consent with PKCE S256 and a state, naming meetings' document as client_id", async () => {
  const { cookie } = await browser();
  const start = await get('/api/me/connections/tasks/start', cookie);
  expect(start.status).toBe(302);
  const url = new URL(start.headers.get('location')!);
  expect(`${url.origin}${url.pathname}`).toBe(`${stack.gateway}/oauth/tasks/authorize`);
  expect(Object.fromEntries(url.searchParams)).toMatchObject({
    response_type: 'code',
    client_id: `${stack.gateway}/api/me/connections/tasks/client.json`,
    redirect_uri: `${stack.gateway}/api/me/connections/tasks/callback`,
    scope: 'tasks:read tasks:write',
    code_challenge_method: 'S256',
  });
  expect(url.searchParams.get('state')!.length).toBeGreaterThanOrEqual(43);
  expect(url.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
});

it('connects: the callback stores the tokens sealed, connections shows since, tasks lists meetings as a connected app', async () => {
  const { meetings, cookie } = await browser();
  expect(await connections(cookie)).toEqual({ tasks: { connected: false, since: null } });
  const before = Date.now();
  await connect(cookie);
  const status = await connections(cookie);
  expect(status.tasks.connected).toBe(true);
  expect(Date.parse(status.tasks.since)).toBeGreaterThanOrEqual(before - 1000);
  const apps = await connectedApps(cookie);
  expect(apps).toEqual([
    expect.objectContaining({
      clientId: `${stack.gateway}/api/me/connections/tasks/client.json`,
      clientName: 'Meetings',
    }),
  ]);
  // Encrypted at rest: the sealed form, never a token of tasks (access tokens start `oat_`).
  const { rows } = await pg.query(
    'select access_token, refresh_token from meetings.task_connections where account_id = $1',
    [meetings.accountId],
  );
  expect(rows).toHaveLength(1);
  for (const sealed of [rows[0].access_token, rows[0].refresh_token]) {
    expect(sealed).toMatch(/^v1\.[0-9a-f]{8}\./);
    expect(sealed).not.toContain('oat_');
  }
});

it('a state answers once, for its own account only; a Deny connects nothing', async () => {
  const first = await browser();
  const back = await consentTo(first.cookie, 'allow');
  // Another meetings account cannot take the answer.
  const other = await browser();
  const stolen = await get(`${back.pathname}${back.search}`, other.cookie);
  expect(stolen.status).toBe(400);
  expect((await stolen.json()).error.code).toBe('invalid_connection_state');
  expect((await connections(other.cookie)).tasks.connected).toBe(false);
  // Its own account can, once.
  expect((await get(`${back.pathname}${back.search}`, first.cookie)).status).toBe(302);
  const replay = await get(`${back.pathname}${back.search}`, first.cookie);
  expect(replay.status).toBe(400);
  expect((await replay.json()).error.code).toBe('invalid_connection_state');

  const denier = await browser();
  const denied = await consentTo(denier.cookie, 'deny');
  expect(denied.searchParams.get('error')).toBe('access_denied');
  const callback = await get(`${denied.pathname}${denied.search}`, denier.cookie);
  expect(callback.headers.get('location')).toBe('/account/meetings?tasks=denied');
  expect(await connections(denier.cookie)).toEqual({ tasks: { connected: false, since: null } });
});

it('disconnecting revokes the grant at tasks (its connected apps no longer list meetings) and forgets the tokens', async () => {
  const { meetings, cookie } = await browser();
  await connect(cookie);
  expect(await connectedApps(cookie)).toHaveLength(1);
  const res = await fetch(`${stack.gateway}/api/me/connections/tasks`, {
    method: 'DELETE',
    headers: { Cookie: cookie },
  });
  expect(res.status).toBe(200);
  expect(await res.json()).toEqual({ tasks: { connected: false, since: null } });
  expect(await connectedApps(cookie)).toEqual([]);
  const { rows } = await pg.query('select 1 from meetings.task_connections where account_id = $1', [
    meetings.accountId,
  ]);
  expect(rows).toEqual([]);
});

it('connecting is for browser sessions: an API key is 403 session_required', async () => {
  const { accountId } = await signedIn('meetings');
  const { key } = await stack.admin('meetings', 'create-key', '--account', accountId, '--scopes', 'meetings:read');
  for (const path of ['/api/me/connections/tasks/start', '/api/me/connections']) {
    const res = await fetch(`${stack.gateway}${path}`, {
      redirect: 'manual',
      headers: { Authorization: `Bearer ${key}` },
    });
    expect(res.status).toBe(403);
    expect((await res.json()).error.code).toBe('session_required');
  }
});
