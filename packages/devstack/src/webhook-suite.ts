import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { expectEnvelope as assertEnvelope } from './envelope.js';
import { serviceEntry } from './service-entry.js';
import { UNLIMITED, WEBHOOK_SUITE_ENV } from './suite-env.js';
import type { TestApp } from './test-app.js';
import { startReceiver, type Receiver } from './webhook-receiver.js';
import { replaySuite } from './webhook-replay-suite.js';

type App = Pick<TestApp<any, any>, 'http' | 'admin' | 'caller' | 'close' | 'db'>;

/** What the shared webhook access suite needs to know about one service under test. */
export interface WebhookSuiteTarget {
  /** The service's declaration (apps/<svc>/src/service.ts). */
  declaration: { name: string; envelope: 'rich' | 'simple'; paths: { keys: string; webhooks: string } };
  /** One event type, the scope that reads its resource, and a GET route that scope guards. */
  event: { type: string; scope: string; readPath: string };
  /** Makes one event of that type whose data carries `marker`, as `auth` (a key holding every scope). */
  emit(t: App, auth: string, marker: string): Promise<void>;
  start(env: Record<string, string>, options?: { webhooks?: boolean }): Promise<App>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The markers of the events `r` received, in order. */
const markers = (r: Receiver, all: string[]) =>
  r.received.map((x) => all.find((m) => x.body.includes(m))).filter((m) => m !== undefined);

/**
 * DESIGN.md "Webhooks" and "Hardening", run by each service against its own app: changing a
 * subscription needs the read scope of every event it carries, deliveries follow the scopes of
 * whoever changed it last, targets in ::ffff:0:0/96 and 64:ff9b:1::/48 are refused, and the
 * process refuses to start in production without its own secrets.
 */
export function webhookSuite(target: WebhookSuiteTarget): void {
  const { name: service, envelope, paths } = target.declaration;
  const { type, scope, readPath } = target.event;
  const expectEnvelope = (body: unknown, code: string) => assertEnvelope(envelope, body, code);
  let t: App;
  let a: Receiver;
  let b: Receiver;
  beforeAll(async () => {
    t = await target.start(WEBHOOK_SUITE_ENV, { webhooks: true });
  });
  afterAll(() => t?.close());
  beforeEach(async () => {
    [a, b] = await Promise.all([startReceiver(), startReceiver()]);
  });
  afterEach(async () => {
    await Promise.all([a.close(), b.close()]);
  });

  /** A new account: a key with every scope, and a browser session (which holds every scope too). */
  async function owner() {
    const c = await t.caller();
    const { cookie } = await t.admin('create-session', '--account', c.accountId);
    return { ...c, cookie: cookie as string };
  }
  /** Another key of the owner's account, made from its session. */
  async function keyOf(o: { cookie: string }, scopes: string[]) {
    const res = await t.http().post(paths.keys).set('Cookie', o.cookie).send({ scopes }).expect(201);
    return { id: res.body.id as string, auth: `Bearer ${res.body.key}` };
  }
  async function subscribe(o: { cookie: string }, url: string) {
    return (
      await t
        .http()
        .post(paths.webhooks)
        .set('Cookie', o.cookie)
        .send({ url, events: [type] })
        .expect(201)
    ).body as { id: string; secret: string };
  }
  describe('changing a subscription', () => {
    it(`refuses a key holding only webhooks that re-points a session's subscription to its own receiver (403), and sends the next ${type} only to the old one`, async () => {
      const o = await owner();
      const sub = await subscribe(o, a.url);
      const k = await keyOf(o, ['webhooks']);
      await t.http().get(readPath).set('Authorization', k.auth).expect(403);
      const patched = await t
        .http()
        .patch(`${paths.webhooks}/${sub.id}`)
        .set('Authorization', k.auth)
        .send({ url: b.url });
      const marker = randomUUID();
      await target.emit(t, o.auth, marker);
      await Promise.race([
        a.waitFor(() => markers(a, [marker]).length > 0),
        b.waitFor(() => markers(b, [marker]).length > 0),
      ]);
      await sleep(500);
      expect({ status: patched.status, toOld: markers(a, [marker]), toNew: markers(b, [marker]) }).toEqual({
        status: 403,
        toOld: [marker],
        toNew: [],
      });
      expectEnvelope(patched.body, 'insufficient_scope');
      expect((await t.http().get(`${paths.webhooks}/${sub.id}`).set('Cookie', o.cookie).expect(200)).body.url).toBe(
        a.url,
      );
    });

    it('needs the read scope of every event it carries for a PATCH of any field and for rotate-secret; a test ping (no data) needs only webhooks', async () => {
      const o = await owner();
      const sub = await subscribe(o, a.url);
      const k = await keyOf(o, ['webhooks']);
      const answers: Array<[string, number]> = [];
      for (const body of [
        { enabled: true },
        { enabled: false },
        { description: 'mine now' },
        { events: [type] },
        { url: b.url },
      ]) {
        const res = await t.http().patch(`${paths.webhooks}/${sub.id}`).set('Authorization', k.auth).send(body);
        answers.push([`PATCH ${JSON.stringify(body)}`, res.status]);
        if (res.status === 403) expectEnvelope(res.body, 'insufficient_scope');
      }
      const rotated = await t.http().post(`${paths.webhooks}/${sub.id}/rotate-secret`).set('Authorization', k.auth);
      answers.push(['rotate-secret', rotated.status]);
      answers.push([
        'test',
        (await t.http().post(`${paths.webhooks}/${sub.id}/test`).set('Authorization', k.auth)).status,
      ]);
      expect(answers).toEqual([
        ['PATCH {"enabled":true}', 403],
        ['PATCH {"enabled":false}', 403],
        ['PATCH {"description":"mine now"}', 403],
        [`PATCH {"events":["${type}"]}`, 403],
        [`PATCH {"url":"${b.url}"}`, 403],
        ['rotate-secret', 403],
        ['test', 202],
      ]);
      // Unchanged, and still signed with the secret it was given.
      expect(
        (await t.http().get(`${paths.webhooks}/${sub.id}`).set('Cookie', o.cookie).expect(200)).body,
      ).toMatchObject({ url: a.url, enabled: true, description: null });
      await a.waitFor((all) => all.some((r) => r.event.type === 'ping'));
      expect(a.received.every((r) => a.verifies(r, sub.secret))).toBe(true);
      // A key that may read what it carries changes it.
      const reader = await keyOf(o, [scope, 'webhooks']);
      await t
        .http()
        .patch(`${paths.webhooks}/${sub.id}`)
        .set('Authorization', reader.auth)
        .send({ description: 'theirs' })
        .expect(200);
      await t.http().post(`${paths.webhooks}/${sub.id}/rotate-secret`).set('Authorization', reader.auth).expect(200);
    });

    it('delivers by the scopes of whoever changed it last: a key that re-pointed it, once revoked, stops it; a session changing it again resumes it', async () => {
      const o = await owner();
      const sub = await subscribe(o, a.url);
      const k = await keyOf(o, [scope, 'webhooks']);
      await t.http().patch(`${paths.webhooks}/${sub.id}`).set('Authorization', k.auth).send({ url: b.url }).expect(200);
      const [m1, m2, m3] = [randomUUID(), randomUUID(), randomUUID()];
      await target.emit(t, o.auth, m1);
      await b.waitFor(() => markers(b, [m1]).length > 0);
      await t.http().delete(`${paths.keys}/${k.id}`).set('Cookie', o.cookie).expect(200);
      await target.emit(t, o.auth, m2);
      await sleep(1000);
      await t
        .http()
        .patch(`${paths.webhooks}/${sub.id}`)
        .set('Cookie', o.cookie)
        .send({ description: 'mine again' })
        .expect(200);
      await target.emit(t, o.auth, m3);
      await b.waitFor(() => markers(b, [m3]).length > 0);
      await sleep(300);
      expect(markers(b, [m1, m2, m3])).toEqual([m1, m3]);
      expect(markers(a, [m1, m2, m3])).toEqual([]);
    });

    it('makes a key that rotates the secret the last changer: once it is revoked, nothing more is sent', async () => {
      const o = await owner();
      const sub = await subscribe(o, a.url);
      const k = await keyOf(o, [scope, 'webhooks']);
      await t.http().post(`${paths.webhooks}/${sub.id}/rotate-secret`).set('Authorization', k.auth).expect(200);
      await t.http().delete(`${paths.keys}/${k.id}`).set('Cookie', o.cookie).expect(200);
      const marker = randomUUID();
      await target.emit(t, o.auth, marker);
      await sleep(1000);
      expect(markers(a, [marker])).toEqual([]);
    });
  });

  for (const suite of [replaySuite, targetSuite]) suite(target);
  productionSecretsSuite(service);
}

/** Targets a webhook may not have, on a service started without WEBHOOK_ALLOW_PRIVATE. */
function targetSuite(target: WebhookSuiteTarget): void {
  const { envelope, paths } = target.declaration;
  const { type } = target.event;
  describe('webhook targets without WEBHOOK_ALLOW_PRIVATE', () => {
    it('refuses IPv4-mapped IPv6 (::ffff:0:0/96) and local-use NAT64 (64:ff9b:1::/48) addresses with 400 on /url, as it refuses private ones', async () => {
      const strict = await target.start({ ...UNLIMITED });
      try {
        const c = await strict.caller();
        // A public literal address: accepted without resolving anything.
        const sub = (
          await strict
            .http()
            .post(paths.webhooks)
            .set('Authorization', c.auth)
            .send({ url: 'http://93.184.216.34/hook', events: [type] })
            .expect(201)
        ).body;
        const refused = [
          'http://[::ffff:127.0.0.1]/hook',
          'http://[::ffff:93.184.216.34]/hook',
          'http://[::ffff:a00:1]:8080/hook',
          'http://[64:ff9b:1::a00:1]/hook',
          'http://[64:ff9b:1:ffff::5db8:d822]/hook',
        ];
        const answers = [];
        for (const url of refused) {
          const created = await strict
            .http()
            .post(paths.webhooks)
            .set('Authorization', c.auth)
            .send({ url, events: [type] });
          const patched = await strict
            .http()
            .patch(`${paths.webhooks}/${sub.id}`)
            .set('Authorization', c.auth)
            .send({ url });
          for (const res of [created, patched]) {
            answers.push({
              url,
              status: res.status,
              path: envelope === 'rich' ? res.body.error?.details?.[0]?.path : '/url',
            });
            if (res.status === 400) assertEnvelope(envelope, res.body, 'validation_failed');
          }
        }
        expect(answers).toEqual(
          refused.flatMap((url) => [
            { url, status: 400, path: '/url' },
            { url, status: 400, path: '/url' },
          ]),
        );
      } finally {
        await strict.close();
      }
    });
  });
}

/** With NODE_ENV=production the service will not start without its own secrets. */
function productionSecretsSuite(service: string): void {
  describe('production secrets', () => {
    it.each(['MCP_SESSION_SECRET', 'WEBHOOK_SECRET_KEY'])(
      'stops the process with NODE_ENV=production and no %s: one line naming it, exit code 1',
      async (missing) => {
        const secrets: Record<string, string> = {
          MCP_SESSION_SECRET: randomBytes(32).toString('base64'),
          WEBHOOK_SECRET_KEY: randomBytes(32).toString('base64'),
        };
        delete secrets[missing];
        const env: Record<string, string | undefined> = {
          ...process.env,
          DATABASE_URL: 'postgres://u:p@127.0.0.1:1/db',
          NODE_ENV: 'production',
          ...secrets,
        };
        delete env[missing];
        const child = spawn(process.execPath, serviceEntry(service, 'serve'), {
          env,
          stdio: ['ignore', 'ignore', 'pipe'],
        });
        let stderr = '';
        child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
        // A loaded CI machine can take seconds to load the entry; the refusal itself is immediate.
        const killer = setTimeout(() => child.kill('SIGKILL'), 40_000);
        const code = await new Promise((resolve) => child.once('exit', resolve));
        clearTimeout(killer);
        expect({ code, stderr }).toEqual({
          code: 1,
          stderr: expect.stringMatching(
            new RegExp(
              `^${service}: configuration error: ${missing} is required with NODE_ENV=production \\([^\\n]+\\)\\n$`,
            ),
          ),
        });
      },
      60_000,
    );
  });
}
