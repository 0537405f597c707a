import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { oauthClient } from './oauth-flow.js';
import { startStack, type Service, type Stack } from './stack.js';

/**
 * Client ID Metadata Documents (the MCP authorization spec's registration since 2025-11-25): an
 * assistant's `client_id` is the URL of a JSON document describing it, served here by the test on
 * 127.0.0.1. Tasks allows private addresses (WEBHOOK_ALLOW_PRIVATE=1, as under `npm start`);
 * meetings keeps the default, and refuses them.
 */
let stack: Stack;
let docs: Server;
let docsOrigin: string;
/** What the document server answers per path, and how often each was asked for. */
const served = new Map<string, { body: string; headers: Record<string, string> }>();
const fetches = new Map<string, number>();
const REDIRECT = 'http://127.0.0.1:9/callback';

beforeAll(async () => {
  stack = await startStack({ tasks: { WEBHOOK_ALLOW_PRIVATE: '1' } });
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
function publish(fields: Record<string, unknown> = {}, headers: Record<string, string> = { 'Cache-Control': 'max-age=60' }): string {
  const path = `/clients/${++serial}.json`;
  const url = `${docsOrigin}${path}`;
  served.set(path, { body: JSON.stringify({ client_id: url, client_name: 'Metadata Assistant', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none', ...fields }), headers });
  return url;
}
const fetchesOf = (url: string) => fetches.get(new URL(url).pathname) ?? 0;

async function signedIn(service: Service = 'tasks'): Promise<string> {
  const { accountId } = await stack.admin(service, 'create-account', '--email', `cimd-${Math.random().toString(36).slice(2)}@example.test`);
  return (await stack.admin(service, 'create-session', '--account', accountId)).cookie as string;
}
const asClient = (clientId: string, service: Service = 'tasks', redirectUri = REDIRECT) => oauthClient(stack.gateway, service, fetch, { clientId, redirectUri });

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
  const tokens = await client.token({ grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: REDIRECT });
  expect(tokens.status).toBe(200);

  const assistant = new Client({ name: 'cimd-assistant', version: '1.0.0' });
  await assistant.connect(new StreamableHTTPClientTransport(new URL(`${stack.gateway}/mcp/tasks?toolsets=all`), {
    requestInit: { headers: { Authorization: `Bearer ${tokens.body.access_token as string}` } },
  }));
  expect((await assistant.listTools()).tools.map((t) => t.name)).toContain('listTasks');
  await assistant.close();

  const refreshed = await client.token({ grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token as string });
  expect(refreshed.status).toBe(200);
  const apps = (await (await fetch(`${stack.gateway}/auth/tasks/apps`, { headers: { Cookie: cookie } })).json()) as { items: Array<{ clientId: string; clientName: string }> };
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
  const answer = await (await asClient(publish(), 'tasks', 'http://127.0.0.1:9/elsewhere')).authorize({}, await signedIn());
  expect(answer.status).toBe(400);
  expect(answer.location).toBeNull();
  expect(answer.html).toContain('Unregistered redirect_uri');
});

const raw = (body: string) => {
  const path = `/clients/${++serial}.json`;
  served.set(path, { body, headers: {} });
  return `${docsOrigin}${path}`;
};

it.each<[string, () => string, string, Service?]>([
  ['larger than 5 KB', () => publish({ logo_uri: `https://example.test/${'x'.repeat(5200)}` }), 'is larger than 5120 bytes'],
  ['not JSON', () => raw('<html>not a client</html>'), 'is not JSON'],
  ['naming another client_id', () => publish({ client_id: 'https://elsewhere.example/client.json' }), 'has a client_id other than its own URL'],
  ['a confidential client', () => publish({ token_endpoint_auth_method: 'client_secret_basic' }), 'token_endpoint_auth_method other than none'],
  ['with an https-less redirect_uri', () => publish({ redirect_uris: ['http://example.test/cb'] }), 'must be https, or http on localhost'],
  ['missing (404)', () => `${docsOrigin}/clients/none.json`, 'answered HTTP 404'],
  ['unreachable', () => 'http://127.0.0.1:9/client.json', 'could not be fetched (ECONNREFUSED)'],
  ['plain http on loopback without WEBHOOK_ALLOW_PRIVATE', () => publish(), 'must be https (http only on localhost or 127.0.0.1 where WEBHOOK_ALLOW_PRIVATE=1)', 'meetings'],
  ['on a private address without WEBHOOK_ALLOW_PRIVATE', () => 'https://127.0.0.1:9/client.json', 'resolves to a private, loopback or link-local address', 'meetings'],
])('refuses a document %s with a 400 page naming the problem, redirecting nowhere', async (_name, url, problem, service = 'tasks') => {
  const clientId = url();
  const answer = await (await asClient(clientId, service)).authorize({}, await signedIn(service));
  expect(answer.status).toBe(400);
  expect(answer.location).toBeNull();
  expect(answer.html).toContain('invalid_client');
  expect(answer.html).toContain(problem);
});
