import { readFileSync } from 'node:fs';
import { k8sTemplatePath, renderGatewayConfigMap } from '@app/devstack';
import {
  DECLARED,
  SERVICES,
  declared,
  everyRateLimitAt,
  familyRequests,
  homePath,
  startStack,
  type Service,
  type Stack,
  STACK_START_MS,
} from './stack.js';

let stack: Stack;
const keys = {} as Record<Service, string>;

beforeAll(async () => {
  stack = await startStack(
    // High per-account limits so only the network-level cap (meetings': 180 a minute per address,
    // the default) answers 429 in these tests.
    everyRateLimitAt(100000, {
      // A small budget, to show a forged X-Forwarded-For does not buy a fresh one.
      extra: { clipboard: { RATE_LIMIT_PER_MINUTE: '5' } },
    }),
  );
  for (const svc of SERVICES) {
    const { accountId } = await stack.admin(svc, 'create-account', '--email', `gw-${svc}@example.test`);
    keys[svc] = (await stack.admin(svc, 'create-key', '--account', accountId)).key;
  }
}, STACK_START_MS);
afterAll(() => stack?.stop());

const get = (path: string, headers: Record<string, string> = {}) => fetch(`${stack.gateway}${path}`, { headers });
const bearer = (svc: Service) => ({ Authorization: `Bearer ${keys[svc]}` });

describe('routing by path family', () => {
  // Each declared family, tried by a path of the service's document under it (by its one method
  // when it has no GET: any other is a 405 before the key is looked at).
  const families = SERVICES.flatMap((svc) =>
    familyRequests(svc).map(({ family, path, method }) => [svc, family, path, method] as const),
  );

  it.each(families)(
    'sends %s paths under %s (%s) to that service, whose key alone is accepted',
    async (svc, _family, path, method) => {
      const own = await fetch(`${stack.gateway}${path}`, { method, headers: bearer(svc) });
      expect(own.status).not.toBe(401);
      expect(own.headers.get('content-type')).toMatch(/application\/json/);
      const other = SERVICES.find((s) => s !== svc)!;
      const foreign = await fetch(`${stack.gateway}${path}`, { method, headers: bearer(other) });
      expect(foreign.status).toBe(401);
    },
  );

  it.each(SERVICES)("answers 401 without a key in %s's envelope", async (svc) => {
    const res = await get(homePath(svc));
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual(
      declared(svc).envelope === 'rich'
        ? {
            error: expect.objectContaining({
              code: 'unauthorized',
              message: expect.any(String),
              requestId: expect.any(String),
            }),
          }
        : { error: expect.any(String) },
    );
  });

  it("publishes each service's OpenAPI document under /openapi/", async () => {
    for (const svc of SERVICES) {
      const res = await get(`/openapi/${svc}.json`);
      expect(res.status).toBe(200);
      const doc = (await res.json()) as { openapi: string };
      expect(doc.openapi).toMatch(/^3\.1/);
    }
  });

  it('answers an unknown path with a JSON 404, never an HTML page', async () => {
    for (const path of ['/api/unknown', '/api/v2/tasks', '/', '/healthz', '/metrics', '/api/clipboards']) {
      const res = await get(path);
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toMatch(/application\/json/);
      expect(await res.json()).toEqual({
        error: expect.objectContaining({ code: 'route_not_found', requestId: expect.any(String) }),
      });
    }
  });
});

describe('API reference pages', () => {
  it("answers /docs itself with an HTML page linking every service's reference", async () => {
    const res = await get('/docs');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('x-request-id')).toBeTruthy();
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
    const html = await res.text();
    for (const svc of SERVICES) {
      expect(html).toContain(`href="/docs/${svc}"`);
      expect(html).toContain(`href="/openapi/${svc}.json"`);
    }
  });

  it('routes /docs/<service> and its assets to that service', async () => {
    for (const svc of SERVICES) {
      const page = await get(`/docs/${svc}`);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toMatch(/^text\/html/);
      expect(await page.text()).toContain(`/docs/${svc}/init.js`);
      const doc = await get(`/docs/${svc}/openapi.json`);
      expect(await doc.json()).toEqual(await (await get(`/openapi/${svc}.json`)).json());
      const bundle = await get(`/docs/${svc}/swagger-ui-bundle.js`);
      expect(bundle.status).toBe(200);
      expect(bundle.headers.get('content-type')).toMatch(/^application\/javascript/);
    }
  });

  it('keeps the JSON 404 for other paths under /docs', async () => {
    for (const path of ['/docs/', '/docs/billing', '/docs/tasksx', '/docsx']) {
      const res = await get(path);
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toMatch(/application\/json/);
    }
  });
});

describe('requests nginx refuses itself', () => {
  it('answers a malformed URI with a JSON 400 and a too-long one with a JSON 414', async () => {
    const malformed = await get('/api/v1/tasks/%E0%A4%A');
    expect(malformed.status).toBe(400);
    expect(malformed.headers.get('content-type')).toMatch(/application\/json/);
    expect(await malformed.json()).toEqual({
      error: expect.objectContaining({ code: 'bad_request', requestId: expect.any(String) }),
    });
    const long = await get(`/api/v1/tasks?q=${'a'.repeat(20000)}`);
    expect(long.status).toBe(414);
    expect(await long.json()).toEqual({ error: expect.objectContaining({ code: 'uri_too_long' }) });
  });
});

describe('request ids and client addresses', () => {
  it('passes a client X-Request-Id through to the service and back', async () => {
    const res = await get('/api/v1/tasks', { 'X-Request-Id': 'client-chosen-42' });
    expect(res.headers.get('x-request-id')).toBe('client-chosen-42');
    expect((await res.json()).error.requestId).toBe('client-chosen-42');
  });

  it('sets an X-Request-Id when the client sends none', async () => {
    const res = await get('/api/me');
    const id = res.headers.get('x-request-id');
    expect(id).toMatch(/^[A-Za-z0-9._:-]{8,}$/);
    expect((await res.json()).error.requestId).toBe(id);
  });

  it('keys address-based limits by the real client address: a forged X-Forwarded-For gains nothing', async () => {
    // Clipboard allows 5 requests a minute per key (per address before authentication), and
    // earlier tests may have spent some of this address's budget: once it is spent, every new
    // forged address is still limited.
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) {
      const res = await get('/api/clipboard', { 'X-Forwarded-For': `203.0.113.${i}` });
      statuses.push(res.status);
    }
    const first429 = statuses.indexOf(429);
    expect(first429).toBeGreaterThanOrEqual(0);
    expect(first429).toBeLessThanOrEqual(5);
    expect(statuses.slice(0, first429).every((s) => s === 401)).toBe(true);
    expect(statuses.slice(first429).every((s) => s === 429)).toBe(true);
  });
});

describe('the meetings network-level cap', () => {
  // Counted by the meetings service in Redis, keyed by the client address the gateway passes;
  // the gateway's own guard (a burst of 360) is looser and does not answer first.
  it('answers 429 as JSON with Retry-After past 180 requests a minute from one address', async () => {
    const results = [];
    for (let i = 0; i < 200; i++) {
      const res = await get('/api/me', bearer('meetings'));
      results.push(res);
      if (res.status === 429) break;
    }
    const limited = results[results.length - 1]!;
    expect(limited.status).toBe(429);
    expect(results.length).toBeGreaterThan(150);
    expect(results.length).toBeLessThanOrEqual(181);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(limited.headers.get('content-type')).toMatch(/application\/json/);
    expect(await limited.json()).toEqual({
      error: expect.objectContaining({ code: 'rate_limited', requestId: expect.any(String) }),
    });
    // Other services are not behind the meetings cap.
    expect((await get('/api/v1/tasks', bearer('tasks'))).status).not.toBe(429);
  });
});

describe('the MCP guard', () => {
  // nginx's own per-address limit on /mcp/<service> (a burst of 120, then 10 a second), before any service.
  it('answers 429 as JSON with Retry-After once one address floods /mcp', async () => {
    const listTools = () =>
      fetch(`${stack.gateway}/mcp/tasks`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
    const statuses: number[] = [];
    let limited: Response | undefined;
    for (let i = 0; i < 400 && !limited; i++) {
      const res = await listTools();
      statuses.push(res.status);
      if (res.status === 429) limited = res;
      else await res.body?.cancel();
    }
    expect(limited).toBeDefined();
    expect(statuses.length).toBeGreaterThan(120);
    expect(statuses.slice(0, -1).every((s) => s === 401)).toBe(true);
    expect(Number(limited!.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(limited!.headers.get('content-type')).toMatch(/application\/json/);
    expect(await limited!.json()).toEqual({
      jsonrpc: '2.0',
      error: { code: -32000, message: expect.stringContaining('Too many requests') },
      id: null,
    });
    // The API and the OAuth server are not behind it.
    expect((await get('/api/v1/tasks', bearer('tasks'))).status).toBe(200);
    expect((await get('/.well-known/oauth-protected-resource/mcp/tasks')).status).toBe(200);
  });
});

describe('sign-in routes and account pages', () => {
  const post = (path: string, body: object) =>
    fetch(`${stack.gateway}${path}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });

  it.each(SERVICES)('routes /account/%s and its assets to that service, under its strict CSP', async (svc) => {
    const page = await get(`/account/${svc}`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    expect(page.headers.get('content-security-policy')).toMatch(/script-src 'self'/);
    const html = await page.text();
    expect(html).toContain(`<script src="/account/${svc}/account.js" defer></script>`);
    for (const asset of ['account.js', 'account.css']) expect((await get(`/account/${svc}/${asset}`)).status).toBe(200);
  });

  it('routes /auth/<service>/ to that service, in its envelope, with a password set by the admin command from stdin', async () => {
    const { accountId } = await stack.adminWithStdin(
      'tasks',
      'gateway password 1\n',
      'create-account',
      '--email',
      'gw-person@example.test',
      '--password-stdin',
    );
    const login = await post('/auth/tasks/login', { email: 'gw-person@example.test', password: 'gateway password 1' });
    expect(login.status).toBe(200);
    expect(await login.json()).toEqual({ accountId, email: 'gw-person@example.test' });
    const cookie = login.headers.get('set-cookie')!;
    expect(cookie).toMatch(/^tasks_sid=sid_[^;]+; .*HttpOnly; SameSite=Lax/);
    const me = await get('/auth/tasks/me', { Cookie: cookie.split(';')[0]! });
    expect(me.status).toBe(200);
    // The meetings account of the same email does not exist: each service has its own accounts.
    const meetings = await post('/auth/meetings/login', {
      email: 'gw-person@example.test',
      password: 'gateway password 1',
    });
    expect(meetings.status).toBe(401);
    expect(await meetings.json()).toEqual({
      error: expect.objectContaining({ code: 'invalid_credentials', requestId: expect.any(String) }),
    });
    // Run on their own (as compose and k8s run them) the services keep sign-up closed.
    const signup = await post('/auth/meetings/signup', { email: 'someone@example.test', password: 'long enough' });
    expect(signup.status).toBe(403);
    expect(await signup.json()).toEqual({ error: expect.objectContaining({ code: 'signup_closed' }) });
    // Clipboard's budget here is 5 requests a minute per address, which earlier tests spend.
    const clipboard = await post('/auth/clipboard/logout', {});
    expect([204, 429]).toContain(clipboard.status);
  });

  it("answers paths beside them with the gateway's JSON 404", async () => {
    for (const path of ['/auth/tasks', '/auth/nobody/login', '/account/taskss', '/account', '/auth/']) {
      const res = await get(path);
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual({ error: expect.objectContaining({ code: 'route_not_found' }) });
    }
  });
});

describe('an upstream that is down', () => {
  it("gives a JSON 502 in the service's envelope, not an HTML page", async () => {
    for (const { name, envelope } of DECLARED) {
      await stack.stopService(name);
      const res = await get(homePath(name), bearer(name));
      expect(res.status).toBe(502);
      expect(res.headers.get('content-type')).toMatch(/application\/json/);
      expect(await res.json()).toEqual(
        envelope === 'rich'
          ? { error: expect.objectContaining({ code: 'upstream_unavailable', requestId: expect.any(String) }) }
          : { error: expect.any(String) },
      );
    }
  });
});

describe('the one gateway config', () => {
  it('is carried unchanged into the Kubernetes ConfigMap (regenerate with npm run generate)', () => {
    expect(readFileSync(k8sTemplatePath, 'utf8')).toBe(renderGatewayConfigMap());
  });
});
