import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
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
// Each test signs people in with the admin command (a process per call): slow on a busy machine
// (a test making three people took over 120 s on two shared cores).
jest.setTimeout(240_000);

beforeAll(async () => {
  // Meetings' document is on the gateway's loopback origin: tasks may fetch it (as tests and a dev stack allow).
  // Supervised as under npm start: a killed tasks process is started again (the completion tests stop it).
  stack = await startStack({ tasks: { OAUTH_CIMD_ALLOW_PRIVATE: '1' } }, { supervise: { log: () => {} } });
  pg = new PgClient({ connectionString: stack.databaseUrl });
  await pg.connect();
}, 120_000);
afterAll(async () => {
  await pg?.end();
  await stack?.stop();
});

async function signedIn(service: Service, timezone = 'UTC'): Promise<{ accountId: string; cookie: string }> {
  const email = `connect-${Math.random().toString(36).slice(2)}@example.test`;
  const { accountId } = await stack.admin(service, 'create-account', '--email', email, '--timezone', timezone);
  const { cookie } = await stack.admin(service, 'create-session', '--account', accountId);
  return { accountId, cookie: cookie as string };
}

/** A person signed in to both services in one browser: the cookie header it sends to the gateway. */
async function browser(meetingsZone = 'UTC') {
  const meetings = await signedIn('meetings', meetingsZone);
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

describe('POST /api/items/:id/send-to-tasks', () => {
  /** A key of the account (`service` scopes read and write) as an Authorization header. */
  async function keyOf(service: Service, accountId: string): Promise<string> {
    const { key } = await stack.admin(
      service,
      'create-key',
      '--account',
      accountId,
      '--scopes',
      `${service}:read,${service}:write`,
    );
    return `Bearer ${key}`;
  }
  const api = async (auth: string, method: string, path: string, body?: unknown) => {
    const res = await fetch(`${stack.gateway}${path}`, {
      method,
      headers: { Authorization: auth, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, headers: res.headers, body: res.status === 204 ? null : await res.json() };
  };
  /** A connected person (meetings in Europe/Berlin) with a weekly series, its first meeting and keys of both services. */
  async function connectedPerson() {
    const person = await browser('Europe/Berlin');
    await connect(person.cookie);
    const meetingsKey = await keyOf('meetings', person.meetings.accountId);
    const tasksKey = await keyOf('tasks', person.tasks.accountId);
    const created = await api(meetingsKey, 'POST', '/api/series', {
      title: 'Weekly with Grace',
      cadence: 'WEEKLY',
      weekday: 1,
      startTime: '09:00',
      durationMinutes: 30,
      timezone: 'Europe/Berlin',
      startDate: '2030-01-07',
    });
    expect(created.status).toBe(201);
    const meeting = created.body.meetings[0];
    const add = async (body: Record<string, unknown>) => {
      const res = await api(meetingsKey, 'POST', `/api/meetings/${meeting.id}/items`, body);
      expect(res.status).toBe(201);
      return res.body;
    };
    return { ...person, meetingsKey, tasksKey, meeting, add };
  }
  const send = (auth: string, itemId: string) => api(auth, 'POST', `/api/items/${itemId}/send-to-tasks`);

  it('is 409 not_an_action for a talking point or decision, 409 not_connected without a connection, 404 for no item', async () => {
    const p = await connectedPerson();
    for (const kind of ['TALKING_POINT', 'DECISION']) {
      const item = await p.add({ kind, text: 'Not a task' });
      const res = await send(p.meetingsKey, item.id);
      expect([res.status, res.body.error.code]).toEqual([409, 'not_an_action']);
    }
    expect((await send(p.meetingsKey, '00000000-0000-4000-8000-000000000000')).status).toBe(404);
    const action = await p.add({ kind: 'ACTION', text: 'Write it down' });
    await fetch(`${stack.gateway}/api/me/connections/tasks`, { method: 'DELETE', headers: { Cookie: p.cookie } });
    const res = await send(p.meetingsKey, action.id);
    expect([res.status, res.body.error.code]).toEqual([409, 'not_connected']);
    const item = await api(p.meetingsKey, 'GET', `/api/meetings/${p.meeting.id}`);
    expect(item.body.items.find((i: { id: string }) => i.id === action.id).linkedTask).toBeNull();
  });

  it("creates the task (title, notes naming series, date and meeting, dueAt 17:00 in the account's zone) and the item carries linkedTask everywhere", async () => {
    const p = await connectedPerson();
    const action = await p.add({ kind: 'ACTION', text: 'Draft the hiring plan', dueDate: '2030-01-10' });
    expect(action.linkedTask).toBeNull();
    const res = await send(p.meetingsKey, action.id);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: action.id, linkedTask: { id: expect.any(String), completedAt: null } });
    const task = await api(p.tasksKey, 'GET', `/api/v1/tasks/${res.body.linkedTask.id}`);
    expect(task.status).toBe(200);
    expect(task.body.item).toMatchObject({
      title: 'Draft the hiring plan',
      notes: `Weekly with Grace, meeting of 2030-01-07\n${stack.gateway}/api/meetings/${p.meeting.id}`,
      // 17:00 in Berlin in January (UTC+1).
      dueAt: '2030-01-10T16:00:00Z',
      completedAt: null,
    });
    // Everywhere items appear: the meeting, the actions list.
    const meeting = await api(p.meetingsKey, 'GET', `/api/meetings/${p.meeting.id}`);
    expect(meeting.body.items.find((i: { id: string }) => i.id === action.id).linkedTask).toEqual(res.body.linkedTask);
    const actions = await api(p.meetingsKey, 'GET', '/api/actions');
    expect(actions.body.actions.find((i: { id: string }) => i.id === action.id).linkedTask).toEqual(
      res.body.linkedTask,
    );
    // Sending again answers the same link and makes nothing new.
    const again = await send(p.meetingsKey, action.id);
    expect(again.body.linkedTask).toEqual(res.body.linkedTask);
    // An overdue action goes without dueAt (tasks refuses a due time in the past); no due date, none either.
    for (const dueDate of ['2020-01-10', null]) {
      const other = await p.add({ kind: 'ACTION', text: `Overdue ${dueDate}`, dueDate });
      const sent = await send(p.meetingsKey, other.id);
      expect(sent.status).toBe(200);
      const made = await api(p.tasksKey, 'GET', `/api/v1/tasks/${sent.body.linkedTask.id}`);
      expect(made.body.item.dueAt).toBeNull();
    }
    const list = await api(p.tasksKey, 'GET', '/api/v1/tasks?q=hiring');
    expect(list.body.items).toHaveLength(1);
  });

  it('two sends of one action at the same time make one task, both answering its link', async () => {
    const p = await connectedPerson();
    const action = await p.add({ kind: 'ACTION', text: 'Book the offsite venue' });
    const [a, b] = await Promise.all([send(p.meetingsKey, action.id), send(p.meetingsKey, action.id)]);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(a.body.linkedTask.id).toBe(b.body.linkedTask.id);
    const list = await api(p.tasksKey, 'GET', '/api/v1/tasks?q=offsite');
    expect(list.body.items.map((t: { id: string }) => t.id)).toEqual([a.body.linkedTask.id]);
  });

  it('MCP: record sends an action to tasks; prepare and record show linkedTask', async () => {
    const p = await connectedPerson();
    const { key } = await stack.admin('meetings', 'create-key', '--account', p.meetings.accountId);
    const client = new Client({ name: 'connect-tasks-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${stack.gateway}/mcp/meetings`), {
        requestInit: { headers: { Authorization: `Bearer ${key}` } },
      }),
    );
    try {
      const call = async (name: string, args: Record<string, unknown>) => {
        const result = (await client.callTool({ name, arguments: args })) as {
          isError?: boolean;
          structuredContent: any;
        };
        expect(result.isError).toBeFalsy();
        return result.structuredContent;
      };
      const added = await call('record', {
        changes: [{ action: 'add_item', id: p.meeting.id, kind: 'ACTION', text: 'Order the badges' }],
      });
      const itemId = added.result[0].result.id;
      expect(added.result[0].result.linkedTask).toBeNull();
      const sent = await call('record', { changes: [{ action: 'send_to_tasks', id: itemId }] });
      const linked = sent.result[0].result.linkedTask;
      expect(linked).toEqual({ id: expect.any(String), completedAt: null });
      const task = await api(p.tasksKey, 'GET', `/api/v1/tasks/${linked.id}`);
      expect(task.body.item.title).toBe('Order the badges');
      const prepared = await call('prepare', { action: 'meeting', id: p.meeting.id });
      expect(JSON.stringify(prepared)).toContain(`"linkedTask":{"id":"${linked.id}","completedAt":null}`);
      const actions = await call('prepare', { action: 'actions' });
      expect(JSON.stringify(actions)).toContain(`"linkedTask":{"id":"${linked.id}","completedAt":null}`);
    } finally {
      await client.close();
    }
  });

  /** Polls `check` every 100 ms until it holds: how long that took (fails past `limitMs`). */
  async function within(limitMs: number, check: () => Promise<boolean>): Promise<number> {
    const from = Date.now();
    while (!(await check())) {
      if (Date.now() - from > limitMs) throw new Error(`not within ${limitMs} ms`);
      await new Promise((r) => setTimeout(r, 100));
    }
    return Date.now() - from;
  }
  const itemOf = async (p: { meetingsKey: string; meeting: { id: string } }, id: string) =>
    (await api(p.meetingsKey, 'GET', `/api/meetings/${p.meeting.id}`)).body.items.find(
      (i: { id: string }) => i.id === id,
    );
  const taskOf = async (p: { tasksKey: string }, id: string) =>
    (await api(p.tasksKey, 'GET', `/api/v1/tasks/${id}`)).body.item;
  /** Timings measured by the completion tests (ms), printed at the end of the file. */
  const timings: Record<string, number[]> = {};
  const timed = (what: string, ms: number) => (timings[what] ??= []).push(ms);
  afterAll(() => console.log(`completion timings (ms): ${JSON.stringify(timings)}`));

  it('completing or reopening the task in tasks marks the action done or open within 5 s; deleting the task clears linkedTask', async () => {
    const p = await connectedPerson();
    const action = await p.add({ kind: 'ACTION', text: 'Renew the certificate' });
    const { linkedTask } = (await send(p.meetingsKey, action.id)).body;
    for (let round = 0; round < 2; round++) {
      const done = await api(p.tasksKey, 'POST', `/api/v1/tasks/${linkedTask.id}/complete`, {});
      expect(done.status).toBe(200);
      timed(
        'completed in tasks -> done in meetings',
        await within(5000, async () => (await itemOf(p, action.id)).completedAt !== null),
      );
      const item = await itemOf(p, action.id);
      expect(item.linkedTask).toEqual({ id: linkedTask.id, completedAt: done.body.item.completedAt });
      expect((await api(p.tasksKey, 'POST', `/api/v1/tasks/${linkedTask.id}/reopen`, {})).status).toBe(200);
      timed(
        'reopened in tasks -> open in meetings',
        await within(5000, async () => (await itemOf(p, action.id)).completedAt === null),
      );
      expect((await itemOf(p, action.id)).linkedTask).toEqual({ id: linkedTask.id, completedAt: null });
    }
    expect((await api(p.tasksKey, 'DELETE', `/api/v1/tasks/${linkedTask.id}`)).status).toBe(200);
    timed(
      'deleted in tasks -> unlinked in meetings',
      await within(5000, async () => (await itemOf(p, action.id)).linkedTask === null),
    );
    // Sent again, it makes a new task (a new round of the item's key).
    const again = await send(p.meetingsKey, action.id);
    expect(again.body.linkedTask.id).not.toBe(linkedTask.id);
    expect((await taskOf(p, again.body.linkedTask.id)).title).toBe('Renew the certificate');
  });

  it('marking the action done in meetings completes the task within 5 s; reopening it reopens the task', async () => {
    const p = await connectedPerson();
    const action = await p.add({ kind: 'ACTION', text: 'Publish the notes' });
    const { linkedTask } = (await send(p.meetingsKey, action.id)).body;
    const patch = (completedAt: string | null) =>
      api(p.meetingsKey, 'PATCH', `/api/items/${action.id}`, { completedAt });
    expect((await patch(new Date().toISOString())).status).toBe(200);
    timed(
      'done in meetings -> completed in tasks',
      await within(5000, async () => (await taskOf(p, linkedTask.id)).completedAt !== null),
    );
    const task = await taskOf(p, linkedTask.id);
    await within(5000, async () => (await itemOf(p, action.id)).linkedTask.completedAt === task.completedAt);
    expect((await patch(null)).status).toBe(200);
    timed(
      'reopened in meetings -> open in tasks',
      await within(5000, async () => (await taskOf(p, linkedTask.id)).completedAt === null),
    );
    await within(5000, async () => (await itemOf(p, action.id)).linkedTask.completedAt === null);
    expect((await itemOf(p, action.id)).completedAt).toBeNull();
  });

  it('with tasks stopped, an action marked done in meetings meanwhile completes its task once tasks is back', async () => {
    const p = await connectedPerson();
    const action = await p.add({ kind: 'ACTION', text: 'Return the laptop' });
    const { linkedTask } = (await send(p.meetingsKey, action.id)).body;
    const tasksStatus = async () =>
      (await fetch(`${stack.gateway}/api/v1/tasks/${linkedTask.id}`, { headers: { Authorization: p.tasksKey } }))
        .status;
    // Killed: the supervisor starts it again after its backoff (1 s), as npm start does.
    stack.process('tasks').kill('SIGKILL');
    await within(5000, async () => (await tasksStatus()) >= 500);
    const done = await api(p.meetingsKey, 'PATCH', `/api/items/${action.id}`, {
      completedAt: new Date().toISOString(),
    });
    expect(done.status).toBe(200);
    // Not sent yet: tasks is away.
    expect(done.body.linkedTask).toEqual({ id: linkedTask.id, completedAt: null });
    await within(60_000, async () => (await tasksStatus()) === 200);
    timed(
      'tasks back -> completion made meanwhile in tasks',
      await within(5000, async () => (await taskOf(p, linkedTask.id)).completedAt !== null),
    );
    await within(5000, async () => (await itemOf(p, action.id)).linkedTask.completedAt !== null);
    // And the other way again, after the restart.
    expect((await api(p.tasksKey, 'POST', `/api/v1/tasks/${linkedTask.id}/reopen`, {})).status).toBe(200);
    await within(5000, async () => (await itemOf(p, action.id)).completedAt === null);
  });

  // Last in the file: it stops tasks.
  it('tasks down: 503 with Retry-After, nothing linked, the connection kept', async () => {
    const p = await connectedPerson();
    const action = await p.add({ kind: 'ACTION', text: 'Call the supplier' });
    await stack.stopService('tasks');
    const res = await send(p.meetingsKey, action.id);
    expect(res.status).toBe(503);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    const meeting = await api(p.meetingsKey, 'GET', `/api/meetings/${p.meeting.id}`);
    expect(meeting.body.items.find((i: { id: string }) => i.id === action.id).linkedTask).toBeNull();
    const { rows } = await pg.query('select linked_task_id from meetings.items where id = $1', [action.id]);
    expect(rows).toEqual([{ linked_task_id: null }]);
    expect((await connections(p.cookie)).tasks.connected).toBe(true);
  });
});
