import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { CREDENTIAL_TTL_MS } from '@app/auth/identity';
import { startTestApp, type TestApp } from './helpers/harness.js';

// Two instances of the service on one database and one Redis prefix, as two replicas.
let a: TestApp;
let b: TestApp;
beforeAll(async () => {
  a = await startTestApp();
  b = await startTestApp({}, { shareWith: a });
});
afterAll(async () => {
  await b.close();
  await a.close();
});

const get = (t: TestApp, auth: { authorization?: string; cookie?: string }) => {
  const req = t.http().get('/api/clipboard');
  if (auth.authorization) req.set('Authorization', auth.authorization);
  if (auth.cookie) req.set('Cookie', auth.cookie);
  return req;
};

describe('credentials resolved through the per-instance cache', () => {
  it('refuses a key revoked through one instance on that instance at once and on the other within a second', async () => {
    const c = await a.caller();
    const { cookie } = await a.admin('create-session', '--account', c.accountId);
    await get(a, { authorization: c.auth }).expect(200);
    await get(b, { authorization: c.auth }).expect(200);
    const { id } = await a.db
      .selectFrom('api_keys')
      .select('id')
      .where('account_id', '=', c.accountId)
      .executeTakeFirstOrThrow();
    await a.http().delete(`/api/settings/keys/${id}`).set('Cookie', cookie).expect(200);
    const revokedAt = Date.now();
    await get(a, { authorization: c.auth }).expect(401);
    let status = 200;
    while (status !== 401 && Date.now() - revokedAt <= CREDENTIAL_TTL_MS) {
      status = (await get(b, { authorization: c.auth })).status;
      if (status !== 401) await sleep(50);
    }
    expect(status).toBe(401);
  });

  it('refuses a key and a session revoked outside the service (another process, a direct UPDATE) on every instance within a second', async () => {
    const c = await a.caller();
    const { cookie } = await a.admin('create-session', '--account', c.accountId);
    for (const t of [a, b]) {
      await get(t, { authorization: c.auth }).expect(200);
      await get(t, { cookie }).expect(200);
    }
    await sql`update api_keys set revoked_at = now() where account_id = ${c.accountId}`.execute(a.db);
    await sql`update sessions set revoked_at = now() where account_id = ${c.accountId}`.execute(a.db);
    // Each cached entry expires a second after its lookup was sent, which was before the revocation.
    await sleep(CREDENTIAL_TTL_MS);
    for (const t of [a, b]) {
      await get(t, { authorization: c.auth }).expect(401);
      await get(t, { cookie }).expect(401);
    }
  });

  it('still resolves a live key on both instances after its cache entry expired', async () => {
    const c = await a.caller();
    await get(a, { authorization: c.auth }).expect(200);
    await sleep(CREDENTIAL_TTL_MS + 50);
    await get(a, { authorization: c.auth }).expect(200);
    await get(b, { authorization: c.auth }).expect(200);
  });
});
