import { sql } from 'kysely';
import { forgetUnusedClients } from '@app/auth/runtime';
import { loadConfig, startTestApp, type TestApp } from './helpers/harness.js';

// DESIGN.md "Hardening": OAuth client registration takes at most 8 KB of metadata, stores only the
// fields it uses, is rate limited per client address, and forgets clients that never got a grant.

let t: TestApp;
let twin: TestApp;
const LIMIT = 4;

beforeAll(async () => {
  t = await startTestApp({ OAUTH_REGISTRATIONS_PER_HOUR: String(LIMIT) });
  // A second replica on the same database and Redis: one budget for both.
  twin = await startTestApp({ OAUTH_REGISTRATIONS_PER_HOUR: String(LIMIT) }, { shareWith: t });
});
afterAll(async () => {
  await twin.close();
  await t.close();
});

let address = 0;
/** A registration from its own client address (the trusted loopback hop names it in X-Forwarded-For). */
const register = (body: object, from = `203.0.113.${++address}`, app = t) =>
  app
    .raw()
    .post('/oauth/tasks/register')
    .set('X-Forwarded-For', from)
    .set('Content-Type', 'application/json')
    .send(JSON.stringify(body));
const client = (extra: object = {}) => ({
  client_name: 'Registered assistant',
  redirect_uris: ['http://127.0.0.1:9/callback'],
  token_endpoint_auth_method: 'none',
  ...extra,
});
const stored = async (id: string) =>
  (await sql<{ metadata: Record<string, unknown> }>`select metadata from oauth_clients where id = ${id}`.execute(t.db))
    .rows[0]?.metadata;

describe('POST /oauth/tasks/register', () => {
  it('refuses metadata over 8 KB with 413 invalid_client_metadata and stores nothing', async () => {
    const before = Number((await sql<{ n: string }>`select count(*) as n from oauth_clients`.execute(t.db)).rows[0]!.n);
    const res = await register(client({ software_statement: 'x'.repeat(93 * 1024) }));
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ error: 'invalid_client_metadata', error_description: expect.stringContaining('8 KB') });
    expect(Number((await sql<{ n: string }>`select count(*) as n from oauth_clients`.execute(t.db)).rows[0]!.n)).toBe(
      before,
    );
  });

  it('accepts metadata just under 8 KB', async () => {
    const res = await register(client({ client_uri: `https://example.test/${'x'.repeat(7800)}` }));
    expect(res.status).toBe(201);
  });

  it('stores and answers only the fields it uses, dropping the rest', async () => {
    const res = await register(
      client({
        software_statement: 'eyJ.signed.statement',
        contacts: ['a@example.test'],
        logo_uri: 'https://example.test/logo.png',
        jwks: { keys: [] },
        scope: 'tasks:read',
        custom_field: 'kept?',
      }),
    );
    expect(res.status).toBe(201);
    const fields = ['client_id', 'client_id_issued_at', 'client_name', 'redirect_uris', 'token_endpoint_auth_method'];
    expect(Object.keys(res.body).sort()).toEqual(fields.sort());
    expect(res.body).toMatchObject({
      client_name: 'Registered assistant',
      redirect_uris: ['http://127.0.0.1:9/callback'],
      token_endpoint_auth_method: 'none',
    });
    const metadata = await stored(res.body.client_id as string);
    expect(Object.keys(metadata!).sort()).toEqual(fields.sort());
  });

  it(`allows ${LIMIT} registrations per client address an hour across replicas, then 429 with Retry-After`, async () => {
    const from = '198.51.100.7';
    for (let i = 0; i < LIMIT; i++) expect((await register(client(), from, i % 2 ? twin : t)).status).toBe(201);
    const refused = await register(client(), from, twin);
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ error: 'too_many_requests', error_description: expect.any(String) });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(60);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(3600);
    // Another address is not held back.
    expect((await register(client(), '198.51.100.8')).status).toBe(201);
  });

  it('defaults to 20 registrations per address an hour', () => {
    expect(loadConfig({ DATABASE_URL: 'postgres://localhost/x' }).oauth.registrationsPerHour).toBe(20);
  });
});

describe('clients that never got a grant', () => {
  it('are forgotten 24 h after they registered; a client with a grant, or a newer one, stays', async () => {
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await register(client())).body.client_id as string);
    const [unused, granted, recent] = ids as [string, string, string];
    const { accountId } = await t.caller();
    await sql`insert into oauth_grants (account_id, client_id, scopes, resource, expires_at) values (${accountId}, ${granted}, ${['tasks:read']}, null, now() + interval '90 days')`.execute(
      t.db,
    );
    await sql`update oauth_clients set created_at = now() - interval '25 hours' where id in (${unused}, ${granted})`.execute(
      t.db,
    );

    expect(await forgetUnusedClients(t.db)).toBe(1);
    expect(await stored(unused)).toBeUndefined();
    expect(await stored(granted)).toBeDefined();
    expect(await stored(recent)).toBeDefined();
    // What a client then sees: its id is unknown.
    const authorize = await t
      .raw()
      .get(
        `/oauth/tasks/authorize?client_id=${unused}&response_type=code&code_challenge=x&code_challenge_method=S256&redirect_uri=http://127.0.0.1:9/callback`,
      );
    expect(authorize.status).toBe(400);
    expect(authorize.text).toContain('invalid_client');
  });
});
