import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { pollUntil, serviceEntry, startReceiver, type Receiver } from '@app/devstack';
import { sql } from 'kysely';
import { createTask } from './helpers/factories.js';
import { loadConfig, startTestApp, type Caller, type TestApp } from './helpers/harness.js';

/**
 * Webhook signing secrets at rest (WEBHOOK_SECRET_KEY): what the database holds, deliveries
 * under key rotation (WEBHOOK_SECRET_KEYS_OLD, `admin webhooks reencrypt`), rows from before
 * encryption, and a process whose key cannot open a row.
 */
const run = promisify(execFile);
const newKey = () => randomBytes(32).toString('base64');
const K1 = newKey();
const K2 = newKey();
const K3 = newKey();
const BASE = { WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_RETRY_BASE_MS: '200' };

const open: TestApp[] = [];
/** An app of this file, closed after each test (the first one last: it owns the database). */
async function app(env: Record<string, string>, options: Parameters<typeof startTestApp>[1] = {}): Promise<TestApp> {
  const t = await startTestApp({ ...BASE, ...env }, options);
  open.push(t);
  return t;
}
async function close(t: TestApp): Promise<void> {
  open.splice(open.indexOf(t), 1);
  await t.close();
}

let receiver: Receiver;
beforeEach(async () => {
  receiver = await startReceiver();
});
afterEach(async () => {
  await receiver.close();
  while (open.length > 0) await open.pop()!.close();
});

async function subscribe(t: TestApp, c: Caller, url = receiver.url) {
  const res = await t
    .http()
    .post('/api/v1/webhooks')
    .set('Authorization', c.auth)
    .send({ url, events: ['task.created'] });
  expect(res.status).toBe(201);
  return res.body as { id: string; secret: string };
}

async function storedRow(t: TestApp, id: string): Promise<{ secret: string; previous_secret: string | null }> {
  const { rows } = await sql<{
    secret: string;
    previous_secret: string | null;
  }>`select secret, previous_secret from webhook_subscriptions where id = ${id}`.execute(t.db);
  return rows[0]!;
}

/** `text` holds none of these secrets in any form: `whsec_...`, or their key bytes in base64, base64url or hex. */
function expectNoSecret(text: string, secrets: string[]): void {
  expect(text).not.toContain('whsec_');
  for (const secret of secrets) {
    const bytes = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
    expect(bytes).toHaveLength(32);
    for (const form of [bytes.toString('base64'), bytes.toString('base64url'), bytes.toString('hex')])
      expect(text).not.toContain(form.slice(0, 20));
    expect(Buffer.from(text, 'latin1').includes(bytes)).toBe(false);
  }
}

/** `npm run admin -- tasks ...` as a real process, with `env` (its keys). */
async function admin(
  databaseUrl: string,
  env: Record<string, string>,
  ...argv: string[]
): Promise<Record<string, any>> {
  const { stdout } = await run(process.execPath, serviceEntry('tasks', 'admin', ...argv), {
    env: { ...process.env, DATABASE_URL: databaseUrl, WEBHOOK_SECRET_KEYS_OLD: '', ...env },
  });
  return JSON.parse(stdout) as Record<string, any>;
}

/** Creates a task and waits until `r` received it; the delivery. */
async function deliveredTo(t: TestApp, c: Caller, r: Receiver = receiver) {
  const task = await createTask(t, c);
  await r.waitFor((all) => all.some((x) => x.event.data?.id === task.id));
  return r.received.find((x) => x.event.data?.id === task.id)!;
}

describe('webhook signing secrets at rest', () => {
  it('stores neither secret in the row (no whsec_, not its bytes), and deliveries verify, also with both secrets for a day after rotate-secret', async () => {
    const t = await app({ WEBHOOK_SECRET_KEY: K1 }, { webhooks: true });
    const c = await t.caller();
    const sub = await subscribe(t, c);
    const row = await storedRow(t, sub.id);
    expect(row.secret).toMatch(/^v1\.[0-9a-f]{8}\.[\w-]+\.[\w-]+$/);
    expectNoSecret(JSON.stringify(row), [sub.secret]);
    expect(receiver.verifies(await deliveredTo(t, c), sub.secret)).toBe(true);

    const rotated = (
      await t.http().post(`/api/v1/webhooks/${sub.id}/rotate-secret`).set('Authorization', c.auth).expect(200)
    ).body as { secret: string };
    const after = await storedRow(t, sub.id);
    expect(after.secret).toMatch(/^v1\./);
    expect(after.previous_secret).toMatch(/^v1\./);
    expectNoSecret(JSON.stringify(after), [sub.secret, rotated.secret]);
    const d = await deliveredTo(t, c);
    expect(String(d.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(receiver.verifies(d, sub.secret)).toBe(true);
    expect(receiver.verifies(d, rotated.secret)).toBe(true);
  });

  it('binds each value to its row and column: a ciphertext moved to another row or to previous_secret does not open', async () => {
    const t = await app({ WEBHOOK_SECRET_KEY: K1 }, { webhooks: true });
    const c = await t.caller();
    const a = await subscribe(t, c);
    const other = await startReceiver();
    try {
      const b = await subscribe(t, c, other.url);
      // b's row given a's sealed secret: b's deliveries are not sent (and a's secret never signs for b).
      await sql`update webhook_subscriptions set secret = (select secret from webhook_subscriptions where id = ${a.id}) where id = ${b.id}`.execute(
        t.db,
      );
      // a's own secret copied to its previous_secret column: it does not open there, so a's
      // deliveries carry one signature, not two.
      await sql`update webhook_subscriptions set previous_secret = secret, previous_secret_expires_at = now() + interval '1 hour' where id = ${a.id}`.execute(
        t.db,
      );
      const d = await deliveredTo(t, c);
      expect(String(d.headers['webhook-signature']).split(' ')).toHaveLength(1);
      expect(receiver.verifies(d, a.secret)).toBe(true);
      await new Promise((r) => setTimeout(r, 500));
      const log = (await t.http().get(`/api/v1/webhooks/${b.id}/deliveries`).set('Authorization', c.auth).expect(200))
        .body.items;
      expect(log[0]).toMatchObject({
        statusCode: null,
        error: expect.stringMatching(/^not sent: the secret does not authenticate/),
      });
      expect(other.received).toHaveLength(0);
    } finally {
      await other.close();
    }
  });

  it('rotates the key: old key listed -> deliveries verify; reencrypt -> old key dropped -> still verify; a wrong key -> visible failure, process up, others delivered', async () => {
    // The API process that made the subscription (K1); deliveries are other processes' on its database.
    const api = await app({ WEBHOOK_SECRET_KEY: K1 });
    const c = await api.caller();
    const sub = await subscribe(api, c);
    const rotated = (
      await api.http().post(`/api/v1/webhooks/${sub.id}/rotate-secret`).set('Authorization', c.auth).expect(200)
    ).body as { secret: string };
    const sealedUnderK1 = await storedRow(api, sub.id);

    // Restarted with a new current key and the old one listed as old.
    const k2old = await app(
      { WEBHOOK_SECRET_KEY: K2, WEBHOOK_SECRET_KEYS_OLD: K1 },
      { shareWith: api, webhooks: true },
    );
    let d = await deliveredTo(api, c);
    expect(receiver.verifies(d, rotated.secret)).toBe(true);
    expect(receiver.verifies(d, sub.secret)).toBe(true);
    await close(k2old);

    const counts = await admin(
      api.databaseUrl,
      { WEBHOOK_SECRET_KEY: K2, WEBHOOK_SECRET_KEYS_OLD: K1 },
      'webhooks',
      'reencrypt',
    );
    console.log(`webhooks reencrypt: ${JSON.stringify(counts)}`);
    expect(counts.reencrypt).toMatchObject({
      subscriptions: 1,
      resealed: 1,
      sealedPlaintext: 0,
      current: 0,
      unreadable: 0,
    });
    const sealedUnderK2 = await storedRow(api, sub.id);
    expect(sealedUnderK2.secret.split('.')[1]).toBe(counts.reencrypt.keyId);
    expect(sealedUnderK2.secret.split('.')[1]).not.toBe(sealedUnderK1.secret.split('.')[1]);
    expectNoSecret(JSON.stringify(sealedUnderK2), [sub.secret, rotated.secret]);
    // Run again: nothing left to do.
    expect((await admin(api.databaseUrl, { WEBHOOK_SECRET_KEY: K2 }, 'webhooks', 'reencrypt')).reencrypt).toMatchObject(
      { resealed: 0, current: 1, unreadable: 0 },
    );

    // The old key dropped.
    const k2 = await app({ WEBHOOK_SECRET_KEY: K2 }, { shareWith: api, webhooks: true });
    d = await deliveredTo(api, c);
    expect(receiver.verifies(d, rotated.secret)).toBe(true);
    await close(k2);

    // A process with a key that opens nothing of this row.
    const lines: string[] = [];
    const wrong = await app(
      { WEBHOOK_SECRET_KEY: K3, LOG_LEVEL: 'info' },
      { shareWith: api, webhooks: true, logSink: (line) => lines.push(line) },
    );
    const other = await startReceiver();
    try {
      const c2 = await wrong.caller();
      const fresh = await subscribe(wrong, c2, other.url);
      const before = receiver.received.length;
      const task = await createTask(api, c);
      // The other subscription is delivered, verified, by the same process meanwhile.
      expect(other.verifies(await deliveredTo(api, c2, other), fresh.secret)).toBe(true);
      const failed = async (): Promise<Array<{ eventId: string; statusCode: number | null; error: string | null }>> =>
        (
          await api
            .http()
            .get(`/api/v1/webhooks/${sub.id}/deliveries?limit=50`)
            .set('Authorization', c.auth)
            .expect(200)
        ).body.items.filter((x: { error: string | null }) => x.error);
      const log = await pollUntil(failed, (entries) => entries.length > 0, { timeoutMs: 10_000, everyMs: 100 });
      console.log(`delivery log with a wrong key: ${JSON.stringify(log[0])}`);
      expect(log[0]).toMatchObject({
        statusCode: null,
        error: expect.stringMatching(
          /^not sent: the secret is encrypted with key [0-9a-f]{8}, which is neither WEBHOOK_SECRET_KEY/,
        ),
      });
      expect(receiver.received.slice(before).filter((r) => r.event.data?.id === task.id)).toHaveLength(0);
      expect((await wrong.raw().get('/healthz')).status).toBe(200);
      // Said in the log too, with no secret and no ciphertext.
      const text = lines.join('\n');
      expect(text).toMatch(/webhook signing secret cannot be decrypted/);
      expectNoSecret(text, [sub.secret, rotated.secret, fresh.secret]);
      for (const stored of [sealedUnderK1, sealedUnderK2, await storedRow(api, fresh.id)]) {
        for (const value of [stored.secret, stored.previous_secret])
          if (value) expect(text).not.toContain(value.split('.')[3]!.slice(0, 16));
      }
    } finally {
      await other.close();
    }
  }, 60_000);

  it('signs with a row stored in plain text before encryption, which the delivering process seals at start-up and reencrypt seals too', async () => {
    const api = await app({ WEBHOOK_SECRET_KEY: K1 });
    const c = await api.caller();
    const first = await subscribe(api, c);
    // As a database from before this change holds it.
    await sql`update webhook_subscriptions set secret = ${first.secret} where id = ${first.id}`.execute(api.db);
    const worker = await app({ WEBHOOK_SECRET_KEY: K1 }, { shareWith: api, webhooks: true });
    expect((await storedRow(api, first.id)).secret).toMatch(/^v1\./);
    expect(receiver.verifies(await deliveredTo(api, c), first.secret)).toBe(true);

    const other = await startReceiver();
    try {
      const second = await subscribe(api, c, other.url);
      await sql`update webhook_subscriptions set secret = ${second.secret} where id = ${second.id}`.execute(api.db);
      // Until it is sealed, the plain-text row still signs.
      expect(other.verifies(await deliveredTo(api, c, other), second.secret)).toBe(true);
      const counts = await admin(api.databaseUrl, { WEBHOOK_SECRET_KEY: K1 }, 'webhooks', 'reencrypt');
      expect(counts.reencrypt).toMatchObject({ subscriptions: 2, sealedPlaintext: 1, current: 1, unreadable: 0 });
      expectNoSecret(JSON.stringify(await storedRow(api, second.id)), [second.secret]);
    } finally {
      await other.close();
    }
    await close(worker);
  }, 60_000);
});

describe('WEBHOOK_SECRET_KEY configuration', () => {
  const env = { DATABASE_URL: 'postgres://u:p@127.0.0.1:1/db' };

  it('defaults to the development key, and refuses a missing or development key with NODE_ENV=production', () => {
    expect(loadConfig(env).webhooks.secretKeys.current.id).toMatch(/^[0-9a-f]{8}$/);
    expect(() => loadConfig({ ...env, NODE_ENV: 'production' })).toThrow(
      'WEBHOOK_SECRET_KEY is required with NODE_ENV=production (32 random bytes, base64: openssl rand -base64 32)',
    );
    const development = loadConfig(env).webhooks.secretKeys.current.key.toString('base64');
    expect(() => loadConfig({ ...env, NODE_ENV: 'production', WEBHOOK_SECRET_KEY: development })).toThrow(
      /public development key/,
    );
    expect(
      loadConfig({
        ...env,
        NODE_ENV: 'production',
        WEBHOOK_SECRET_KEY: K1,
        MCP_SESSION_SECRET: newKey(),
      }).webhooks.secretKeys.current.key.equals(Buffer.from(K1, 'base64')),
    ).toBe(true);
  });

  it('takes 32 bytes as base64 or hex, and refuses short, malformed and patterned keys', () => {
    const hex = randomBytes(32).toString('hex');
    expect(
      loadConfig({ ...env, WEBHOOK_SECRET_KEY: hex, WEBHOOK_SECRET_KEYS_OLD: `${K1}, ${K2}` }).webhooks.secretKeys.old,
    ).toHaveLength(2);
    for (const bad of [
      randomBytes(16).toString('base64'),
      'not a key',
      `${K1}x`,
      Buffer.alloc(32, 7).toString('base64'),
      'ab'.repeat(32),
    ]) {
      expect(() => loadConfig({ ...env, WEBHOOK_SECRET_KEY: bad })).toThrow(
        /^WEBHOOK_SECRET_KEY (must be 32 random bytes|is not random enough)/,
      );
    }
    expect(() => loadConfig({ ...env, WEBHOOK_SECRET_KEYS_OLD: `${K1},short` })).toThrow(
      /^WEBHOOK_SECRET_KEYS_OLD \(entry 2\) must be 32 random bytes/,
    );
  });

  it('stops the service process with one line and exit code 1 for a bad key', async () => {
    const child = spawn(process.execPath, serviceEntry('tasks', 'serve'), {
      env: { ...process.env, ...env, NODE_ENV: 'production', WEBHOOK_SECRET_KEY: 'hunter2' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise((resolve) => child.once('exit', resolve));
    expect(code).toBe(1);
    expect(stderr).toBe(
      'tasks: configuration error: WEBHOOK_SECRET_KEY must be 32 random bytes as base64 or 64 hex digits (openssl rand -base64 32)\n',
    );
  });
});

describe('MCP_SESSION_SECRET configuration', () => {
  const env = { DATABASE_URL: 'postgres://u:p@127.0.0.1:1/db', WEBHOOK_SECRET_KEY: K1 };
  const production = { ...env, NODE_ENV: 'production' };

  it('defaults outside production to a development secret that does not depend on DATABASE_URL', () => {
    const secret = loadConfig(env).mcpSessionSecret;
    expect(typeof secret).toBe('string');
    expect(
      loadConfig({ ...env, DATABASE_URL: 'postgres://other:secret@db.example.test:5432/x' }).mcpSessionSecret,
    ).toBe(secret);
    expect(secret).not.toContain('127.0.0.1');
  });

  it('is required with NODE_ENV=production, where the development secret and a short one are refused; a worker (no MCP) needs none', () => {
    expect(() => loadConfig(production)).toThrow(/^MCP_SESSION_SECRET is required with NODE_ENV=production/);
    expect(() => loadConfig({ ...production, MCP_SESSION_SECRET: loadConfig(env).mcpSessionSecret })).toThrow(
      /^MCP_SESSION_SECRET is the public development secret/,
    );
    expect(() => loadConfig({ ...production, MCP_SESSION_SECRET: 'x'.repeat(31) })).toThrow(
      'MCP_SESSION_SECRET must be at least 32 characters',
    );
    const own = randomBytes(32).toString('base64');
    expect(loadConfig({ ...production, MCP_SESSION_SECRET: own }).mcpSessionSecret).toBe(own);
    expect(loadConfig({ ...production, SERVICE_ROLE: 'worker' }).serviceRole).toBe('worker');
  });
});
