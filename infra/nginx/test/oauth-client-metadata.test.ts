import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { oauthClient } from './oauth-flow.js';
import { startStack, type Service, type Stack } from './stack.js';

/**
 * Client ID Metadata Documents (the MCP authorization spec's registration since 2025-11-25): an
 * assistant's `client_id` is the URL of a JSON document describing it, served here by the test on
 * 127.0.0.1. Tasks allows documents on private addresses (OAUTH_CIMD_ALLOW_PRIVATE=1, which only
 * tests set); meetings keeps the default, and refuses them even with WEBHOOK_ALLOW_PRIVATE=1 (as
 * under `npm start`). Every refusal shows one message, whatever went wrong.
 */
let stack: Stack;
let docs: Server;
let docsOrigin: string;
/** What the document server answers per path, and how often each was asked for. */
const served = new Map<string, { body: string; headers: Record<string, string> }>();
const fetches = new Map<string, number>();
const REDIRECT = 'http://127.0.0.1:9/callback';

beforeAll(async () => {
  stack = await startStack({ tasks: { OAUTH_CIMD_ALLOW_PRIVATE: '1' }, meetings: { WEBHOOK_ALLOW_PRIVATE: '1' } });
  docs = createServer((req, res) => {
    fetches.set(req.url!, (fetches.get(req.url!) ?? 0) + 1);
    const doc = served.get(req.url!);
    if (!doc) return void res.writeHead(404).end();
    res.writeHead(200, { 'Content-Type': 'application/json', ...doc.headers }).end(doc.body);
  });
  await new Promise<void>((r) => docs.listen(0, '127.0.0.1', r));
  docsOrigin = `http://127.0.0.1:${(docs.address() as AddressInfo).port}`;
}, 120_000);
afterAll(async () => {
  await new Promise((r) => docs?.close(r));
  await stack?.stop();
});

let serial = 0;
/** Serves a client's document under a path of its own; `fields` change or add to the usual ones. */
function publish(
  fields: Record<string, unknown> = {},
  headers: Record<string, string> = { 'Cache-Control': 'max-age=60' },
): string {
  const path = `/clients/${++serial}.json`;
  const url = `${docsOrigin}${path}`;
  served.set(path, {
    body: JSON.stringify({
      client_id: url,
      client_name: 'Metadata Assistant',
      redirect_uris: [REDIRECT],
      token_endpoint_auth_method: 'none',
      ...fields,
    }),
    headers,
  });
  return url;
}
const fetchesOf = (url: string) => fetches.get(new URL(url).pathname) ?? 0;

async function signedIn(service: Service = 'tasks'): Promise<string> {
  const { accountId } = await stack.admin(
    service,
    'create-account',
    '--email',
    `cimd-${Math.random().toString(36).slice(2)}@example.test`,
  );
  return (await stack.admin(service, 'create-session', '--account', accountId)).cookie as string;
}
const asClient = (clientId: string, service: Service = 'tasks', redirectUri = REDIRECT) =>
  oauthClient(stack.gateway, service, fetch, { clientId, redirectUri });

it('is advertised in the authorization server metadata', async () => {
  const metadata = await (await fetch(`${stack.gateway}/.well-known/oauth-authorization-server/oauth/tasks`)).json();
  expect(metadata).toMatchObject({ client_id_metadata_document_supported: true });
});

it('signs an assistant in by its document: consent naming it and its host, code, token, refresh, and tools/list at /mcp', async () => {
  const clientId = publish();
  const client = await asClient(clientId);
  const cookie = await signedIn();
  const { code, verifier, consentHtml } = await client.consent(cookie);
  expect(consentHtml).toContain(`Connect Metadata Assistant (${new URL(docsOrigin).host}) to your Tasks account?`);
  const tokens = await client.token({
    grant_type: 'authorization_code',
    code,
    code_verifier: verifier,
    redirect_uri: REDIRECT,
  });
  expect(tokens.status).toBe(200);

  const assistant = new Client({ name: 'cimd-assistant', version: '1.0.0' });
  await assistant.connect(
    new StreamableHTTPClientTransport(new URL(`${stack.gateway}/mcp/tasks?toolsets=all`), {
      requestInit: { headers: { Authorization: `Bearer ${tokens.body.access_token as string}` } },
    }),
  );
  expect((await assistant.listTools()).tools.map((t) => t.name)).toContain('listTasks');
  await assistant.close();

  const refreshed = await client.token({
    grant_type: 'refresh_token',
    refresh_token: tokens.body.refresh_token as string,
  });
  expect(refreshed.status).toBe(200);
  const apps = (await (await fetch(`${stack.gateway}/auth/tasks/apps`, { headers: { Cookie: cookie } })).json()) as {
    items: Array<{ clientId: string; clientName: string }>;
  };
  expect(apps.items).toEqual([expect.objectContaining({ clientId, clientName: 'Metadata Assistant' })]);
});

it('uses a fetched document while its max-age holds, and fetches a no-store one each time', async () => {
  const cookie = await signedIn();
  const cached = publish();
  for (let i = 0; i < 2; i++) expect((await (await asClient(cached)).authorize({}, cookie)).status).toBe(200);
  expect(fetchesOf(cached)).toBe(1);
  const uncached = publish({}, { 'Cache-Control': 'no-store' });
  for (let i = 0; i < 2; i++) expect((await (await asClient(uncached)).authorize({}, cookie)).status).toBe(200);
  expect(fetchesOf(uncached)).toBe(2);
});

it('refuses a redirect_uri the document does not list, on a page that redirects nowhere', async () => {
  const answer = await (
    await asClient(publish(), 'tasks', 'http://127.0.0.1:9/elsewhere')
  ).authorize({}, await signedIn());
  expect(answer.status).toBe(400);
  expect(answer.location).toBeNull();
  expect(answer.html).toContain('Unregistered redirect_uri');
});

const raw = (body: string) => {
  const path = `/clients/${++serial}.json`;
  served.set(path, { body, headers: {} });
  return `${docsOrigin}${path}`;
};

/** The one message every document that cannot be used shows: nothing about what answered at the URL. */
const REFUSED = 'The client metadata document named by client_id could not be fetched or is not a valid public client';

/** The authorize page for a client_id, as a signed-in browser sees it. */
async function refusal(clientId: string, service: Service = 'tasks') {
  const answer = await (await asClient(clientId, service)).authorize({}, await signedIn(service));
  expect(answer.status).toBe(400);
  expect(answer.location).toBeNull();
  expect(answer.html).toContain('invalid_client');
  return answer.html;
}

it.each<[string, () => string, Service?]>([
  ['larger than 5 KB', () => publish({ logo_uri: `https://example.test/${'x'.repeat(5200)}` })],
  ['not JSON', () => raw('<html>not a client</html>')],
  ['naming another client_id', () => publish({ client_id: 'https://elsewhere.example/client.json' })],
  ['a confidential client', () => publish({ token_endpoint_auth_method: 'client_secret_basic' })],
  ['with an https-less redirect_uri', () => publish({ redirect_uris: ['http://example.test/cb'] })],
  ['missing (404)', () => `${docsOrigin}/clients/none.json`],
  ['unreachable', () => 'http://127.0.0.1:9/client.json'],
  [
    'plain http on loopback without OAUTH_CIMD_ALLOW_PRIVATE (WEBHOOK_ALLOW_PRIVATE=1 does not allow it)',
    () => publish(),
    'meetings',
  ],
  ['on a private address without OAUTH_CIMD_ALLOW_PRIVATE', () => 'https://127.0.0.1:9/client.json', 'meetings'],
])(
  'refuses a document %s with a 400 page showing the one generic message, redirecting nowhere',
  async (_name, url, service = 'tasks') => {
    const html = await refusal(url(), service);
    expect(html).toContain(REFUSED);
    expect(html).not.toMatch(
      /ECONNREFUSED|5120|HTTP 404|WEBHOOK_ALLOW_PRIVATE|OAUTH_CIMD_ALLOW_PRIVATE|client_secret_basic|example\.test\/cb/,
    );
  },
);

it('shows the identical page for a closed port and for a document that said something wrong', async () => {
  const closedPort = await refusal('http://127.0.0.1:9/client.json');
  const wrongDocument = await refusal(publish({ client_id: 'https://elsewhere.example/client.json' }));
  const message = (html: string) => /<p>([^<]*)<\/p>/.exec(html)?.[1];
  expect(message(closedPort)).toBe(message(wrongDocument));
  expect(message(closedPort)).toContain(REFUSED);
});

it('answers the token endpoint with the same message in its JSON error', async () => {
  const res = await fetch(`${stack.gateway}/oauth/meetings/token`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      client_id: publish(),
      code: 'x',
      code_verifier: 'y'.repeat(43),
    }),
  });
  expect(res.status).toBe(400);
  expect(await res.json()).toEqual({ error: 'invalid_client', error_description: REFUSED });
});
