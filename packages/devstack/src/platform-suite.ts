import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Express } from 'express';
import pg from 'pg';
import request from 'supertest';
import { expectEnvelope as assertEnvelope } from './envelope.js';
import { serviceEntry } from './service-entry.js';

const run = promisify(execFile);

/** What the shared platform suite needs to know about one service under test. */
export interface PlatformTarget {
  /** The service's declaration (apps/<svc>/src/service.ts): what the suite expects of the app comes from it. */
  declaration: {
    name: string;
    envelope: 'rich' | 'simple';
    scopes: readonly string[];
    paths: { keys: string };
    limits: { bodyLimitBytes: number };
  };
  /** An authenticated route of the service, e.g. /api/v1/tasks. */
  protectedPath: string;
  /** A path inside the service's API prefix that no route serves. */
  unknownPath: string;
  /** A POST route that takes a JSON body. */
  postPath: string;
  allowedOrigin: string;
  /** The service's OpenAPI document: every `/api` operation in it is checked for X-Timezone. */
  openapiDocument: { paths: Record<string, Record<string, unknown>> };
  /** Starts the app; with `logSink`, its log lines go there. */
  start(logSink?: (line: string) => void): Promise<{
    server: Server;
    /** The app the server serves (its request and response prototypes). */
    app: Express;
    /** The app's own database, whose connections the outage tests terminate. */
    databaseUrl: string;
    admin(...argv: string[]): Promise<Record<string, any>>;
    caller(scopes?: string[]): Promise<{ accountId: string; auth: string }>;
    accountKeyIds(accountId: string): Promise<string[]>;
    close(): Promise<void>;
  }>;
}

/**
 * helmet 8's defaults, with Cross-Origin-Resource-Policy opened (API keys are used from any
 * origin): what every answer of a service carries, its own pages aside (they set their own CSP).
 */
const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy':
    "default-src 'self';base-uri 'self';font-src 'self' https: data:;form-action 'self';frame-ancestors 'self';img-src 'self' data:;" +
    "object-src 'none';script-src 'self';script-src-attr 'none';style-src 'self' https: 'unsafe-inline';upgrade-insecure-requests",
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'cross-origin',
  'origin-agent-cluster': '?1',
  'referrer-policy': 'no-referrer',
  'strict-transport-security': 'max-age=31536000; includeSubDomains',
  'x-content-type-options': 'nosniff',
  'x-dns-prefetch-control': 'off',
  'x-download-options': 'noopen',
  'x-frame-options': 'SAMEORIGIN',
  'x-permitted-cross-domain-policies': 'none',
  'x-xss-protection': '0',
};

/** The started app, as the suite's tests call it. */
type StartedApp = Awaited<ReturnType<PlatformTarget['start']>> & { http: () => ReturnType<typeof request> };

/** What each group of the platform suite shares. */
interface PlatformContext {
  target: PlatformTarget;
  /** Set by the suite's `beforeAll`: read it inside a test, not when the group is declared. */
  t: StartedApp;
  /** The app's log lines, as it writes them. */
  logLines: string[];
  expectEnvelope: (body: unknown, code: string) => void;
}

/**
 * The platform rules every service shares (DESIGN.md): health, readiness, metrics, request ids,
 * error envelopes, invalid JSON, body limit, authentication, origins, CORS, session-only key
 * management and the admin commands. Each app runs it against its own real app.
 */
export function platformSuite(target: PlatformTarget): void {
  const ctx = {
    target,
    logLines: [] as string[],
    expectEnvelope: (body: unknown, code: string) => assertEnvelope(target.declaration.envelope, body, code),
  } as PlatformContext;
  beforeAll(async () => {
    const started = await target.start((line) => ctx.logLines.push(line));
    ctx.t = { ...started, http: () => request(started.server) };
  });
  afterAll(() => ctx.t.close());

  healthTests(ctx);
  httpServerTests(ctx);
  errorTests(ctx);
  outageTests(ctx);
  scopeTests(ctx);
  timezoneTests(ctx);
  authenticationTests(ctx);
  keyManagementTests(ctx);
  adminCommandTests(ctx);
  docsPageTests(ctx);
  routerPathTests(ctx);
  anyNameTests(ctx);
  requestLogTests(ctx);
}

function healthTests(ctx: PlatformContext): void {
  describe('health, readiness and metrics', () => {
    it('answers /healthz while the process is up', async () => {
      const res = await ctx.t.http().get('/healthz').expect(200);
      expect(res.body).toEqual({ status: 'ok' });
    });

    it('reports Postgres and Redis reachable on /readyz', async () => {
      const res = await ctx.t.http().get('/readyz').expect(200);
      expect(res.body).toEqual({ status: 'ready', checks: { postgres: 'ok', redis: 'ok' } });
    });

    it('exposes a request-duration histogram by route template on /metrics', async () => {
      await ctx.t.http().get('/healthz');
      const res = await ctx.t.http().get('/metrics').expect(200);
      expect(res.headers['content-type']).toMatch(/text\/plain/);
      expect(res.text).toMatch(/http_request_duration_seconds_bucket\{.*route="\/healthz".*status="200"/);
    });
  });
}

function httpServerTests(ctx: PlatformContext): void {
  const { target } = ctx;
  describe('the HTTP server', () => {
    it("makes each request and response on the app's own prototypes, so Express has none to move (V8 then keeps one hidden class for all of them)", async () => {
      const seen: boolean[] = [];
      const probe = (req: object, res: object) =>
        seen.push(
          Object.getPrototypeOf(req) === ctx.t.app.request && Object.getPrototypeOf(res) === ctx.t.app.response,
        );
      // First: what the server made, before Express sees it.
      ctx.t.server.prependListener('request', probe);
      try {
        await ctx.t.http().get('/healthz').expect(200);
        await ctx.t.http().get(target.protectedPath).expect(401);
      } finally {
        ctx.t.server.off('request', probe);
      }
      expect(seen).toEqual([true, true]);
    });
  });
}

function errorTests(ctx: PlatformContext): void {
  const { target, expectEnvelope } = ctx;
  const {
    envelope,
    scopes,
    limits: { bodyLimitBytes },
  } = target.declaration;
  describe('errors and request ids', () => {
    it('answers 401 in the rich envelope with the X-Request-Id of the response', async () => {
      const res = await ctx.t.http().get(target.protectedPath).expect(401);
      expectEnvelope(res.body, 'unauthorized');
      if (envelope === 'rich') expect(res.body.error.requestId).toBe(res.headers['x-request-id']);
      expect(res.headers['x-request-id']).toBeDefined();
    });

    it('keeps a well-formed incoming X-Request-Id and replaces a malformed one', async () => {
      const kept = await ctx.t.http().get(target.protectedPath).set('X-Request-Id', 'abc-123');
      expect(kept.headers['x-request-id']).toBe('abc-123');
      if (envelope === 'rich') expect(kept.body.error.requestId).toBe('abc-123');
      const replaced = await ctx.t.http().get(target.protectedPath).set('X-Request-Id', 'bad id with spaces');
      expect(replaced.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    });

    it("sets helmet's security headers (resources readable cross-origin) on answers and errors alike", async () => {
      const c = await ctx.t.caller();
      const answers = [
        await ctx.t.http().get(target.protectedPath).set('Authorization', c.auth).expect(200),
        await ctx.t.http().get(target.protectedPath).expect(401),
        await ctx.t.http().get('/nowhere').expect(404),
      ];
      for (const res of answers) {
        expect(Object.fromEntries(Object.keys(SECURITY_HEADERS).map((name) => [name, res.headers[name]]))).toEqual(
          SECURITY_HEADERS,
        );
      }
    });

    it('answers an unknown route with a JSON 404', async () => {
      const c = await ctx.t.caller();
      const res = await ctx.t.http().get(target.unknownPath).set('Authorization', c.auth).expect(404);
      expectEnvelope(res.body, 'route_not_found');
      const outside = await ctx.t.http().get('/nowhere').expect(404);
      expectEnvelope(outside.body, 'route_not_found');
    });

    it('answers invalid JSON with 400 invalid_json, never a 500 or HTML', async () => {
      const c = await ctx.t.caller();
      const res = await ctx.t
        .http()
        .post(target.postPath)
        .set('Authorization', c.auth)
        .set('Content-Type', 'application/json')
        .send('{"title": ');
      expect(res.status).toBe(400);
      expect(res.headers['content-type']).toMatch(/application\/json/);
      expectEnvelope(res.body, 'invalid_json');
    });

    it('checks the scope before the body: a read-only key posting invalid JSON gets 403', async () => {
      const c = await ctx.t.caller([scopes[0]!]);
      const res = await ctx.t
        .http()
        .post(target.postPath)
        .set('Authorization', c.auth)
        .set('Content-Type', 'application/json')
        .send('{"oops": ');
      expect(res.status).toBe(403);
      expectEnvelope(res.body, 'insufficient_scope');
    });

    it('answers a body over the limit with 413', async () => {
      const c = await ctx.t.caller();
      const res = await ctx.t
        .http()
        .post(target.postPath)
        .set('Authorization', c.auth)
        .send({ filler: 'n'.repeat(bodyLimitBytes + 1024) });
      expect(res.status).toBe(413);
      expectEnvelope(res.body, 'payload_too_large');
    });
  });
}

/** How long the dead-checkout test's 100 rounds may take; the test itself gets 30 s more. */
const ROUNDS_WITHIN_MS = 150_000;

function outageTests(ctx: PlatformContext): void {
  const { target } = ctx;
  const { envelope } = target.declaration;
  describe('database connections lost', () => {
    /** The app's own database. */
    const databaseName = () => new URL(ctx.t.databaseUrl).pathname.slice(1);

    /** Terminates every connection to the app's database (as a restart or failover does). */
    async function terminateBackends(admin: pg.Client): Promise<number> {
      const res = await admin.query(
        'select count(pg_terminate_backend(pid))::int as n from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()',
        [databaseName()],
      );
      return res.rows[0].n as number;
    }

    it('answers 503 service_unavailable with Retry-After (never 500) while connections are killed and refused, then serves again', async () => {
      // One account per worker: keys resolve from the credential cache while the database is
      // away, so every request is counted, and 240 on one account would pass meetings' 120 a minute.
      const callers = await Promise.all(Array.from({ length: 6 }, () => ctx.t.caller()));
      const admin = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
      await admin.connect();
      // New connections refused too, as while a restart or failover is under way: a read whose
      // connection was killed idle is otherwise served on a new one (the next test).
      const database = `"${databaseName().replace(/"/g, '""')}"`;
      await admin.query(`alter database ${database} allow_connections false`);
      const statuses: Record<number, number> = {};
      const bad: string[] = [];
      let killing = true;
      let killed = 0;
      const killer = (async () => {
        while (killing) {
          killed += await terminateBackends(admin);
          await new Promise((r) => setTimeout(r, 15));
        }
      })();
      // Forty requests each, or what fits in 15 s: on a machine whose cores npm test's lanes all
      // take, 240 requests through connections killed every 15 ms once outlasted the test's 30 s,
      // and its killer, still running, then failed the file's next tests.
      const deadline = Date.now() + 15_000;
      const worker = async ({ auth }: { auth: string }) => {
        for (let i = 0; i < 40 && Date.now() < deadline; i++) {
          const res = await ctx.t.http().get(target.protectedPath).set('Authorization', auth);
          statuses[res.status] = (statuses[res.status] ?? 0) + 1;
          if (res.status === 503) {
            if (res.headers['retry-after'] === undefined) bad.push('503 without Retry-After');
            if (envelope === 'rich' && res.body.error?.code !== 'service_unavailable')
              bad.push(JSON.stringify(res.body));
            if (envelope === 'simple' && typeof res.body.error !== 'string') bad.push(JSON.stringify(res.body));
          } else if (res.status !== 200) bad.push(`${res.status} ${JSON.stringify(res.body)}`);
        }
      };
      try {
        await Promise.all(callers.map(worker));
      } finally {
        killing = false;
        await killer;
        await admin.query(`alter database ${database} allow_connections true`);
        await admin.end();
      }
      expect(bad).toEqual([]);
      expect(killed).toBeGreaterThan(0);
      expect(statuses[503] ?? 0).toBeGreaterThan(0);
      // The same process serves again at once: the pool replaced what was killed.
      await ctx.t.http().get(target.protectedPath).set('Authorization', callers[0]!.auth).expect(200);
    });

    it(
      'serves a read at once after Postgres ends the idle connections (200, never 503): a dead checkout is replaced',
      async () => {
        // Postgres ends a terminated session a moment after pg_terminate_backend returns, so a
        // request right after it can check out a connection whose end has not reached the pool.
        // Before the pool replaced such a checkout, 26-29 of these 100 answered 503; when it replaced
        // it only once, 5-6 still did (the pool held other idle connections, ended as well).
        // 400 requests over six accounts, under meetings' 120 a minute each.
        const callers = await Promise.all(Array.from({ length: 6 }, () => ctx.t.caller()));
        const admin = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
        await admin.connect();
        const failed: string[] = [];
        // Each round opens connections anew: 140 ms a round alone, 714 ms beside npm test's other
        // lanes on a slow machine (fresh-clone run 53: 70 rounds in 50 s). Its loop ends before the
        // test's timeout: one still terminating backends would fail the file's next tests.
        const deadline = Date.now() + ROUNDS_WITHIN_MS;
        try {
          const get = (i: number) =>
            ctx.t
              .http()
              .get(target.protectedPath)
              .set('Authorization', callers[i % 6]!.auth);
          for (let i = 0; i < 100; i++) {
            if (Date.now() > deadline) {
              failed.push(`only ${i} of 100 rounds in ${ROUNDS_WITHIN_MS / 1000} s`);
              break;
            }
            // Three requests at once first: the pool then holds several idle connections, all ended at once.
            await Promise.all([get(i), get(i + 1), get(i + 2)]);
            await terminateBackends(admin);
            const res = await get(i);
            if (res.status !== 200) failed.push(`${i}: ${res.status} ${JSON.stringify(res.body)}`);
          }
        } finally {
          await admin.end();
        }
        expect(failed).toEqual([]);
      },
      ROUNDS_WITHIN_MS + 30_000,
    );
  });
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

/** Each operation of the target's document under `/api/`, the session-only keys routes aside. */
function apiOperations(
  target: PlatformTarget,
): Array<{ method: string; path: string; operation: { security?: Record<string, string[]>[] } }> {
  const keysPath = target.declaration.paths.keys;
  return Object.entries(target.openapiDocument.paths)
    .filter(([path]) => path.startsWith('/api/') && !path.startsWith(keysPath))
    .flatMap(([path, item]) =>
      METHODS.filter((m) => m in item).map((method) => ({
        method,
        path,
        operation: item[method] as { security?: Record<string, string[]>[] },
      })),
    );
}

function scopeTests(ctx: PlatformContext): void {
  const { envelope, scopes } = ctx.target.declaration;
  describe('scopes', () => {
    // Each operation's API-key scopes, as its document says (`security: [{ apiKey: [...] }, ...]`).
    const operations = apiOperations(ctx.target)
      .map(({ method, path, operation }) => ({
        method,
        path,
        needs: (operation.security ?? []).find((s) => s.apiKey)?.apiKey ?? [],
      }))
      .filter((op) => op.needs.length > 0);

    it('lists the API operations it checks', () => {
      expect(operations.length).toBeGreaterThan(5);
    });

    it('answers 403 insufficient_scope on every API operation to a key holding every scope but the one it needs, before the body', async () => {
      const id = '00000000-0000-4000-8000-000000000000';
      const failures: string[] = [];
      const callers = new Map<string, string>();
      for (const { method, path, needs } of operations) {
        const others = scopes.filter((s) => !needs.includes(s));
        const key = others.join(' ');
        if (!callers.has(key)) callers.set(key, (await ctx.t.caller(others)).auth);
        const url = path.replace(/\{date\}/g, '2030-01-01').replace(/\{[^}]+\}/g, id);
        const res = await (ctx.t.http() as any)
          [method](url)
          .set('Authorization', callers.get(key)!)
          .set('Content-Type', 'application/json')
          .send(method === 'get' || method === 'delete' ? undefined : '{"not": "checked yet"');
        const ok =
          res.status === 403 &&
          (envelope === 'simple' ? typeof res.body.error === 'string' : res.body.error?.code === 'insufficient_scope');
        if (!ok)
          failures.push(
            `${method.toUpperCase()} ${path} without ${needs.join(', ')}: ${res.status} ${JSON.stringify(res.body)}`,
          );
      }
      expect(failures).toEqual([]);
    });
  });
}

function timezoneTests(ctx: PlatformContext): void {
  const { target } = ctx;
  const { envelope } = target.declaration;
  describe('X-Timezone', () => {
    const operations = apiOperations(target);

    it('lists the API operations it checks', () => {
      expect(operations.length).toBeGreaterThan(5);
    });

    it('answers 400 validation_failed for an unknown zone on every API operation, before the body', async () => {
      const { auth } = await ctx.t.caller();
      const id = '00000000-0000-4000-8000-000000000000';
      const failures: string[] = [];
      for (const { method, path } of operations) {
        const url = path.replace(/\{[^}]+\}/g, id);
        const res = await (ctx.t.http() as any)
          [method](url)
          .set('Authorization', auth)
          .set('X-Timezone', 'Nowhere/Atlantis')
          .set('Content-Type', 'application/json')
          .send(method === 'get' || method === 'delete' ? undefined : '{"not": "checked yet"');
        const ok =
          res.status === 400 &&
          (envelope === 'simple'
            ? /X-Timezone/.test(res.body.error)
            : res.body.error?.code === 'validation_failed' && res.body.error.details?.[0]?.path === 'X-Timezone');
        if (!ok) failures.push(`${method.toUpperCase()} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
      }
      expect(failures).toEqual([]);
    });

    it('accepts a known zone', async () => {
      const { auth } = await ctx.t.caller();
      await ctx.t
        .http()
        .get(target.protectedPath)
        .set('Authorization', auth)
        .set('X-Timezone', 'Asia/Kolkata')
        .expect(200);
    });
  });
}

function authenticationTests(ctx: PlatformContext): void {
  const { target, expectEnvelope } = ctx;
  const {
    name: service,
    paths: { keys: keysPath },
  } = target.declaration;
  describe('authentication', () => {
    it('rejects a missing, malformed, unknown or revoked key with 401', async () => {
      const account = await ctx.t.admin('create-account', '--email', 'revoked@example.test');
      const key = await ctx.t.admin('create-key', '--account', account.accountId);
      await ctx.t
        .http()
        .get(target.protectedPath)
        .set('Authorization', `Bearer ${key.key}`)
        .expect((r) => expect(r.status).not.toBe(401));
      await ctx.t.admin('revoke-key', '--id', key.id);
      for (const header of [`Bearer ${key.key}`, `Bearer ${service}_unknown`, 'Basic abc', 'Bearer']) {
        const res = await ctx.t.http().get(target.protectedPath).set('Authorization', header);
        expect(res.status).toBe(401);
        expectEnvelope(res.body, 'unauthorized');
      }
    });

    it('accepts a browser session cookie, and refuses it from a foreign Origin with 403', async () => {
      const account = await ctx.t.admin('create-account', '--email', 'browser@example.test');
      const { cookie } = await ctx.t.admin('create-session', '--account', account.accountId);
      expect(cookie).toMatch(new RegExp(`^${service}_sid=`));
      await ctx.t.http().get(keysPath).set('Cookie', cookie).expect(200);
      await ctx.t.http().get(keysPath).set('Cookie', cookie).set('Origin', target.allowedOrigin).expect(200);
      const res = await ctx.t
        .http()
        .get(keysPath)
        .set('Cookie', cookie)
        .set('Origin', 'https://evil.example')
        .expect(403);
      expectEnvelope(res.body, 'cross_origin');
    });

    it('lets an API key call from any Origin', async () => {
      const c = await ctx.t.caller();
      const res = await ctx.t
        .http()
        .get(target.unknownPath)
        .set('Authorization', c.auth)
        .set('Origin', 'https://elsewhere.example');
      expect(res.status).toBe(404);
      expect(res.headers['access-control-allow-origin']).toBe('*');
      expect(res.headers['access-control-allow-credentials']).toBeUndefined();
      expect(res.headers['cross-origin-resource-policy']).toBe('cross-origin');
    });

    it('answers CORS preflights, allowing credentials only to allowed origins', async () => {
      const allowed = await ctx.t
        .http()
        .options(target.protectedPath)
        .set('Origin', target.allowedOrigin)
        .set('Access-Control-Request-Method', 'POST')
        .expect(204);
      expect(allowed.headers['access-control-allow-origin']).toBe(target.allowedOrigin);
      expect(allowed.headers['access-control-allow-credentials']).toBe('true');
      expect(allowed.headers['access-control-allow-headers']).toMatch(/Idempotency-Key/);
      const other = await ctx.t
        .http()
        .options(target.protectedPath)
        .set('Origin', 'https://other.example')
        .set('Access-Control-Request-Method', 'GET')
        .expect(204);
      expect(other.headers['access-control-allow-origin']).toBe('*');
    });
  });
}

function keyManagementTests(ctx: PlatformContext): void {
  const { target, expectEnvelope } = ctx;
  const {
    name: service,
    scopes,
    paths: { keys: keysPath },
  } = target.declaration;
  describe(`session-only key management (${keysPath})`, () => {
    it('creates a key once, lists it without the secret, and revokes it', async () => {
      const account = await ctx.t.admin('create-account', '--email', 'keys@example.test');
      const { cookie } = await ctx.t.admin('create-session', '--account', account.accountId);
      const created = await ctx.t
        .http()
        .post(keysPath)
        .set('Cookie', cookie)
        .send({ name: 'ci', scopes: [scopes[0]] })
        .expect(201);
      expect(created.body).toEqual(
        expect.objectContaining({
          id: expect.any(String),
          key: expect.stringMatching(new RegExp(`^${service}_`)),
          scopes: [scopes[0]],
          name: 'ci',
        }),
      );
      const list = await ctx.t.http().get(keysPath).set('Cookie', cookie).expect(200);
      expect(list.body.items).toHaveLength(1);
      expect(JSON.stringify(list.body)).not.toContain(created.body.key);
      await ctx.t
        .http()
        .delete(`${keysPath}/${created.body.id}`)
        .set('Cookie', cookie)
        .expect(200, { id: created.body.id, revoked: true });
      await ctx.t.http().get(target.protectedPath).set('Authorization', `Bearer ${created.body.key}`).expect(401);
    });

    it("refuses an unknown scope with 400 and another account's key id with 404", async () => {
      const account = await ctx.t.admin('create-account', '--email', 'keys2@example.test');
      const { cookie } = await ctx.t.admin('create-session', '--account', account.accountId);
      const bad = await ctx.t
        .http()
        .post(keysPath)
        .set('Cookie', cookie)
        .send({ scopes: ['nobody:read'] })
        .expect(400);
      expectEnvelope(bad.body, 'validation_failed');
      const other = await ctx.t.caller();
      const [otherKey] = await ctx.t.accountKeyIds(other.accountId);
      await ctx.t.http().delete(`${keysPath}/${otherKey}`).set('Cookie', cookie).expect(404);
    });

    it('refuses API keys on every keys route with 403', async () => {
      const c = await ctx.t.caller();
      for (const [method, path] of [
        ['get', keysPath],
        ['post', keysPath],
        ['delete', `${keysPath}/00000000-0000-0000-0000-000000000000`],
      ] as const) {
        const res = await ctx.t.http()[method](path).set('Authorization', c.auth).send({});
        expect(res.status).toBe(403);
        expectEnvelope(res.body, 'session_required');
      }
    });
  });
}

function adminCommandTests(ctx: PlatformContext): void {
  const { name: service, scopes } = ctx.target.declaration;
  describe('admin commands', () => {
    it('create-account gives an account (and on tasks a personal workspace); a duplicate email fails', async () => {
      const created = await ctx.t.admin(
        'create-account',
        '--email',
        'Admin@Example.test',
        '--timezone',
        'Europe/Berlin',
      );
      expect(created).toEqual(
        service === 'tasks'
          ? { accountId: expect.any(String), workspaceId: expect.any(String) }
          : { accountId: expect.any(String) },
      );
      await expect(ctx.t.admin('create-account', '--email', 'admin@example.test')).rejects.toThrow(/already exists/);
      await expect(
        ctx.t.admin('create-account', '--email', 'x@example.test', '--timezone', 'Mars/Base'),
      ).rejects.toThrow(/time zone/);
    });

    it('create-key defaults to every scope and refuses an unknown one', async () => {
      const { accountId } = await ctx.t.admin('create-account', '--email', 'scopes@example.test');
      expect((await ctx.t.admin('create-key', '--account', accountId)).scopes).toEqual(scopes);
      await expect(ctx.t.admin('create-key', '--account', accountId, '--scopes', 'nobody:read')).rejects.toThrow(
        /unknown scope/,
      );
      await expect(ctx.t.admin('create-key', '--account', '00000000-0000-0000-0000-000000000000')).rejects.toThrow(
        /no account/,
      );
    });

    it("runs as its own process on the service's schema alone: none of the app, Express, ajv, MCP, OpenTelemetry, ioredis or the queue", async () => {
      // What `npm run admin` starts, with a preload that lists every module it loaded once it exits.
      const dir = mkdtempSync(join(tmpdir(), 'admin-modules-'));
      try {
        const listed = join(dir, 'modules.json');
        const hook = join(dir, 'list-modules.cjs');
        writeFileSync(
          hook,
          `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(listed)}, JSON.stringify(Object.keys(require.cache))));`,
        );
        const { stdout } = await run(
          process.execPath,
          ['--require', hook, ...serviceEntry(service, 'admin', 'create-account', '--email', 'process@example.test')],
          { env: { ...process.env, DATABASE_URL: ctx.t.databaseUrl } },
        );
        expect(JSON.parse(stdout)).toMatchObject({ accountId: expect.any(String) });
        const modules = JSON.parse(readFileSync(listed, 'utf8')) as string[];
        const heavy = /\/node_modules\/(express|ajv|@modelcontextprotocol|@opentelemetry|ioredis|graphile-worker)\//;
        expect(modules.filter((path) => heavy.test(path) || path.endsWith(`/apps/${service}/dist/app.js`))).toEqual([]);
        // It did load the schema: the service's own migrations.
        expect(modules.some((path) => path.includes(`/apps/${service}/dist/db/migrations/`))).toBe(true);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}

function docsPageTests(ctx: PlatformContext): void {
  const { name: service } = ctx.target.declaration;
  describe('GET /docs/<service> (the API reference page)', () => {
    const base = `/docs/${service}`;

    it('serves an HTML page that loads Swagger UI from the service itself, with no inline script', async () => {
      for (const path of [base, `${base}/`]) {
        const res = await ctx.t.http().get(path).expect(200);
        expect(res.headers['content-type']).toMatch(/^text\/html/);
        expect(res.headers['content-security-policy']).toContain("script-src 'self'");
        expect(res.headers['content-security-policy']).not.toMatch(/script-src[^;]*unsafe/);
        const scripts = [...res.text.matchAll(/<script([^>]*)>([^<]*)<\/script>/g)];
        expect(scripts.map((m) => m[1]!.match(/src="([^"]+)"/)?.[1])).toEqual([
          `${base}/swagger-ui-bundle.js`,
          `${base}/init.js`,
        ]);
        expect(scripts.every((m) => m[2] === '')).toBe(true);
      }
    });

    it('serves the assets and the init script it names, and the document under the same prefix', async () => {
      const bundle = await ctx.t.http().get(`${base}/swagger-ui-bundle.js`).expect(200);
      expect(bundle.headers['content-type']).toMatch(/^application\/javascript/);
      expect(Number(bundle.headers['content-length'])).toBeGreaterThan(100_000);
      expect((await ctx.t.http().get(`${base}/swagger-ui.css`).expect(200)).headers['content-type']).toMatch(
        /^text\/css/,
      );
      const init = await ctx.t.http().get(`${base}/init.js`).expect(200);
      expect(init.text).toContain(`url: "${base}/openapi.json"`);
      const doc = await ctx.t.http().get(`${base}/openapi.json`).expect(200);
      expect(doc.body).toEqual((await ctx.t.http().get('/openapi.json').expect(200)).body);
    });

    it("answers another path under /docs with the service's JSON 404", async () => {
      for (const path of [`${base}/index.html`, `${base}/../../package.json`, '/docs']) {
        const res = await ctx.t.http().get(path).expect(404);
        expect(res.headers['content-type']).toMatch(/application\/json/);
      }
    });
  });
}

function routerPathTests(ctx: PlatformContext): void {
  const { name: service } = ctx.target.declaration;
  describe('the pages, OAuth and MCP paths (routers entered only for their own paths)', () => {
    const svc = service;
    const paths = [
      `/docs/${svc}`,
      `/account/${svc}`,
      `/.well-known/oauth-authorization-server/oauth/${svc}`,
      `/.well-known/oauth-protected-resource/mcp/${svc}`,
      `/mcp/${svc}`,
      `/auth/${svc}/apps`,
    ];
    const shout = (path: string) => path.replace(/[a-z]/g, (c, i: number) => (i % 2 ? c.toUpperCase() : c));

    it('answers each in any letter case and with a trailing slash as it does its own spelling (Express matches routes so)', async () => {
      const answer = async (path: string) => {
        const res = await ctx.t.http().get(path);
        return `${res.status} ${String(res.headers['content-type']).split(';')[0]}`;
      };
      const wrong: string[] = [];
      for (const path of paths) {
        const own = await answer(path);
        expect(own).not.toMatch(/^404/);
        for (const other of [shout(path), `${path}/`]) {
          const got = await answer(other);
          if (got !== own) wrong.push(`${other}: ${got}, not ${own}`);
        }
      }
      expect(wrong).toEqual([]);
    });

    it('passes a path that only begins like one of them on to the JSON 404', async () => {
      for (const path of [`/docs/${svc}x`, `/account/${svc}-old`, `/mcp/${svc}s`, `/auth/${svc}/appsx`]) {
        const res = await ctx.t.http().get(path).expect(404);
        expect(res.headers['content-type']).toMatch(/application\/json/);
      }
    });
  });
}

function anyNameTests(ctx: PlatformContext): void {
  const { name: service } = ctx.target.declaration;
  describe('paths of any name under the pages, assets and docs', () => {
    // Names an object lookup would find on Object.prototype, a NUL, a traversal and a 10 KB name.
    const names = [
      'constructor',
      '__proto__',
      'toString',
      'hasOwnProperty',
      'valueOf',
      '%00',
      'a%00.js',
      '..%2F..%2Fpackage.json',
      'x'.repeat(10_240),
    ];
    const prefixes = [
      `/account/${service}/`,
      `/docs/${service}/`,
      `/oauth/${service}/`,
      `/auth/${service}/`,
      `/mcp/${service}/`,
    ];

    it('answers every one with a JSON 404 or 400, never a 500', async () => {
      const wrong: string[] = [];
      for (const prefix of prefixes) {
        for (const name of names) {
          const res = await ctx.t.http().get(`${prefix}${name}`);
          const type = String(res.headers['content-type']);
          if (![400, 404].includes(res.status) || !type.includes('application/json'))
            wrong.push(`${prefix}${name.slice(0, 40)}: ${res.status} ${type}`);
        }
      }
      expect(wrong).toEqual([]);
    });
  });
}

function requestLogTests(ctx: PlatformContext): void {
  const { target, logLines } = ctx;
  describe('request logs', () => {
    it('writes one line per request with the route template, status, time, request id and account, and never a secret or content', async () => {
      const account = await ctx.t.admin('create-account', '--email', 'logs@example.test');
      const { key } = await ctx.t.admin('create-key', '--account', account.accountId);
      const { cookie } = await ctx.t.admin('create-session', '--account', account.accountId);
      const marker = 'private-content-7f3a9c';
      logLines.length = 0;
      const withKey = await ctx.t
        .http()
        .post(target.postPath)
        .set('Authorization', `Bearer ${key}`)
        .send({ title: marker, content: marker, name: marker });
      const withCookie = await ctx.t.http().get(`${target.protectedPath}?q=${marker}`).set('Cookie', cookie);
      await new Promise((r) => setTimeout(r, 50));
      const entries = logLines
        .flatMap((l) => l.trim().split('\n'))
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      const requests = entries.filter((e) => e.msg === 'request');
      expect(requests).toHaveLength(2);
      expect(requests[0]).toEqual(
        expect.objectContaining({
          method: 'POST',
          route: target.postPath,
          status: withKey.status,
          requestId: withKey.headers['x-request-id'],
          accountId: account.accountId,
          ms: expect.any(Number),
        }),
      );
      expect(requests[1]).toEqual(
        expect.objectContaining({
          method: 'GET',
          route: target.protectedPath,
          status: withCookie.status,
          requestId: withCookie.headers['x-request-id'],
        }),
      );
      expect(String(requests[1]!.route)).not.toContain(marker);
      const all = logLines.join('\n');
      for (const secret of [key, cookie.split('=')[1]!, marker]) expect(all).not.toContain(secret);
    });
  });
}
