import type { TestApp } from './test-app.js';
import { expectEnvelope as assertEnvelope } from './envelope.js';
import { UNLIMITED } from './suite-env.js';

type App = Pick<TestApp<any, any>, 'http' | 'raw' | 'admin' | 'adminWithStdin' | 'db' | 'close' | 'config'>;

/** What the shared sign-in suite needs to know about one service under test. */
export interface AccountsTarget {
  service: 'tasks' | 'meetings' | 'clipboard';
  envelope: 'rich' | 'simple';
  keysPath: string;
  /** A read route a key with the first scope may call, e.g. /api/v1/tasks. */
  readPath: string;
  scopes: string[];
  allowedOrigin: string;
  loadConfig(env: Record<string, string | undefined>): unknown;
  start(
    env: Record<string, string>,
    options?: { shareWith?: any; withoutRedis?: boolean; logSink?: (line: string) => void },
  ): Promise<App>;
}

const PASSWORD = 'correct horse battery';

/** What each group of the sign-in suite shares. */
interface AccountsContext {
  target: AccountsTarget;
  /** `/auth/<svc>`, where the sign-in routes are. */
  auth: string;
  /** `<svc>_sid`. */
  cookieName: string;
  /** Set by the suite's `beforeAll` (SIGNUP=open): read it inside a test, not when the group is declared. */
  t: App;
  /** The app's log lines, as it writes them. */
  logLines: string[];
  /** An email no other test has used. */
  newEmail: () => string;
  expectEnvelope: (body: unknown, code: string) => void;
  /** The session cookie a response sets (`<svc>_sid=...`, or `__Host-<svc>_sid=...` when `secure`), with its attributes. */
  sessionCookie: (res: { headers: Record<string, unknown> }, secure?: boolean) => { pair: string; attributes: string };
  /** Signs a new account up on the suite's app. */
  signUp: (
    email?: string,
    password?: string,
  ) => Promise<{ email: string; password: string; accountId: string; cookie: string }>;
}

/** The shared part of the sign-in suite for one target; `t` is set once the suite's app has started. */
function accountsContext(target: AccountsTarget): AccountsContext {
  const auth = `/auth/${target.service}`;
  const cookieName = `${target.service}_sid`;
  let emails = 0;
  const newEmail = () => `person${++emails}-${Date.now()}@example.test`;
  const ctx = {
    target,
    auth,
    cookieName,
    logLines: [] as string[],
    newEmail,
    expectEnvelope: (body: unknown, code: string) => assertEnvelope(target.envelope, body, code),
    sessionCookie(res: { headers: Record<string, unknown> }, secure = false) {
      const all = ([] as string[]).concat((res.headers['set-cookie'] as string[] | undefined) ?? []);
      const line = all.find((c) => c.startsWith(`${secure ? '__Host-' : ''}${cookieName}=`));
      if (!line) throw new Error(`no ${cookieName} cookie in ${JSON.stringify(all)}`);
      const [pair, ...attributes] = line.split(';');
      return { pair: pair!.trim(), attributes: attributes.map((a) => a.trim()).join('; ') };
    },
    async signUp(email = newEmail(), password = PASSWORD) {
      const res = await ctx.t.http().post(`${auth}/signup`).send({ email, password }).expect(201);
      return { email, password, accountId: res.body.accountId as string, cookie: ctx.sessionCookie(res).pair };
    },
  } as AccountsContext;
  return ctx;
}

/**
 * DESIGN.md "Accounts, sign-in and the account page", run by each service against its own app:
 * sign-up, login (same 401 either way, throttling), logout, /me, lastUsedAt, the admin password
 * commands, SIGNUP, and the account page's HTML and assets.
 */
export function accountsSuite(target: AccountsTarget): void {
  const ctx = accountsContext(target);
  beforeAll(async () => {
    ctx.t = await target.start({ ...UNLIMITED, SIGNUP: 'open' }, { logSink: (line) => ctx.logLines.push(line) });
  });
  afterAll(() => ctx.t?.close());

  signUpTests(ctx);
  signupSettingTests(ctx);
  loginTests(ctx);
  logoutTests(ctx);
  meTests(ctx);
  keyNameTests(ctx);
  lastUsedAtTests(ctx);
  adminPasswordTests(ctx);
  accountPageTests(ctx);
}

function signUpTests(ctx: AccountsContext): void {
  const { target, auth, cookieName, newEmail, expectEnvelope, sessionCookie, signUp } = ctx;
  describe(`POST ${auth}/signup`, () => {
    it('creates the account (email trimmed and lower-cased), signs it in with an HttpOnly SameSite=Lax cookie, and answers 201', async () => {
      const res = await ctx.t
        .http()
        .post(`${auth}/signup`)
        .send({ email: '  New.Person@Example.TEST ', password: PASSWORD, timezone: 'Europe/Berlin' })
        .expect(201);
      expect(res.body).toEqual({ accountId: expect.any(String), email: 'new.person@example.test' });
      const cookie = sessionCookie(res);
      expect(cookie.pair).toMatch(new RegExp(`^${cookieName}=sid_[A-Za-z0-9_-]{43}$`));
      expect(cookie.attributes).toMatch(/HttpOnly/);
      expect(cookie.attributes).toMatch(/SameSite=Lax/);
      expect(cookie.attributes).toMatch(/Path=\//);
      expect(cookie.attributes).not.toMatch(/Secure/);
      const me = await ctx.t.http().get(`${auth}/me`).set('Cookie', cookie.pair).expect(200);
      expect(me.body).toEqual({
        accountId: res.body.accountId,
        email: 'new.person@example.test',
        timezone: 'Europe/Berlin',
      });
      // Signed in for the service's own API too (on tasks: with its personal workspace).
      await ctx.t.http().get(target.readPath).set('Cookie', cookie.pair).expect(200);
    });

    it("stores the password only as an argon2id hash at OWASP's parameters", async () => {
      const { accountId } = await signUp();
      const row = await ctx.t.db
        .selectFrom('accounts')
        .select('password_hash')
        .where('id', '=', accountId)
        .executeTakeFirstOrThrow();
      expect(row.password_hash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
      expect(row.password_hash).not.toContain(PASSWORD);
    });

    it('answers 409 email_taken for an email in use, whatever its case', async () => {
      const { email } = await signUp();
      const res = await ctx.t
        .http()
        .post(`${auth}/signup`)
        .send({ email: email.toUpperCase(), password: 'another password' })
        .expect(409);
      expectEnvelope(res.body, 'email_taken');
      if (target.envelope === 'rich') expect(res.body.error.code).toBe('email_taken');
      expect(res.headers['set-cookie']).toBeUndefined();
    });

    it.each([
      ['no password', { email: 'a@example.test' }, '/password'],
      ['a 7-character password', { email: 'a@example.test', password: '1234567' }, '/password'],
      ['a 257-character password', { email: 'a@example.test', password: 'p'.repeat(257) }, '/password'],
      ['an email without @', { email: 'not-an-email', password: PASSWORD }, '/email'],
      ['an email over 254 characters', { email: `${'a'.repeat(250)}@example.test`, password: PASSWORD }, '/email'],
      ['an unknown time zone', { email: 'a@example.test', password: PASSWORD, timezone: 'Mars/Base' }, '/timezone'],
      ['an unknown property', { email: 'a@example.test', password: PASSWORD, admin: true }, '/admin'],
    ])('answers 400 validation_failed for %s', async (_name, body, path) => {
      const res = await ctx.t.http().post(`${auth}/signup`).send(body).expect(400);
      expectEnvelope(res.body, 'validation_failed');
      if (target.envelope === 'rich')
        expect(res.body.error.details).toEqual(expect.arrayContaining([expect.objectContaining({ path })]));
    });

    it('accepts exactly 8 and 256 characters, spaces and all (no composition rules)', async () => {
      await ctx.t.http().post(`${auth}/signup`).send({ email: newEmail(), password: '12345678' }).expect(201);
      await ctx.t
        .http()
        .post(`${auth}/signup`)
        .send({ email: newEmail(), password: 'p a'.repeat(85) + 'x' })
        .expect(201);
    });

    it('answers invalid JSON with 400 invalid_json', async () => {
      const res = await ctx.t
        .http()
        .post(`${auth}/signup`)
        .set('Content-Type', 'application/json')
        .send('{"email": ')
        .expect(400);
      expectEnvelope(res.body, 'invalid_json');
    });

    it('refuses a foreign Origin with 403 and accepts an allowed one', async () => {
      const res = await ctx.t
        .http()
        .post(`${auth}/signup`)
        .set('Origin', 'https://evil.example')
        .send({ email: newEmail(), password: PASSWORD })
        .expect(403);
      expectEnvelope(res.body, 'cross_origin');
      await ctx.t
        .http()
        .post(`${auth}/signup`)
        .set('Origin', target.allowedOrigin)
        .send({ email: newEmail(), password: PASSWORD })
        .expect(201);
    });

    it('names the cookie __Host-<svc>_sid and marks it Secure when the request came over HTTPS (through the trusted proxy); the session works under that name', async () => {
      const res = await ctx.t
        .http()
        .post(`${auth}/signup`)
        .set('X-Forwarded-Proto', 'https')
        .send({ email: newEmail(), password: PASSWORD })
        .expect(201);
      const cookie = sessionCookie(res, true);
      expect(cookie.pair).toMatch(new RegExp(`^__Host-${cookieName}=sid_`));
      expect(cookie.attributes).toMatch(/Secure/);
      expect(cookie.attributes).toMatch(/Path=\//);
      expect(cookie.attributes).not.toMatch(/Domain=/i);
      expect(
        ((res.headers['set-cookie'] as unknown as string[]) ?? []).some((c) => c.startsWith(`${cookieName}=`)),
      ).toBe(false);
      await ctx.t.http().get(`${auth}/me`).set('Cookie', cookie.pair).expect(200);
      await ctx.t.http().get(target.readPath).set('Cookie', cookie.pair).expect(200);
      // Logout over https revokes it and clears the __Host- cookie.
      const out = await ctx.t
        .http()
        .post(`${auth}/logout`)
        .set('X-Forwarded-Proto', 'https')
        .set('Cookie', cookie.pair)
        .expect(204);
      expect(sessionCookie(out, true).attributes).toMatch(/Expires=Thu, 01 Jan 1970/);
      await ctx.t.http().get(`${auth}/me`).set('Cookie', cookie.pair).expect(401);
    });

    it('follows COOKIE_SECURE: always gives a Secure __Host- cookie over plain http, never a plain one over https', async () => {
      const always = await target.start(
        { ...UNLIMITED, SIGNUP: 'open', COOKIE_SECURE: 'always' },
        { shareWith: ctx.t },
      );
      const never = await target.start({ ...UNLIMITED, SIGNUP: 'open', COOKIE_SECURE: 'never' }, { shareWith: ctx.t });
      try {
        const secure = await always
          .http()
          .post(`${auth}/signup`)
          .send({ email: newEmail(), password: PASSWORD })
          .expect(201);
        expect(sessionCookie(secure, true).attributes).toMatch(/Secure/);
        const plain = await never
          .http()
          .post(`${auth}/signup`)
          .set('X-Forwarded-Proto', 'https')
          .send({ email: newEmail(), password: PASSWORD })
          .expect(201);
        expect(sessionCookie(plain).attributes).not.toMatch(/Secure/);
      } finally {
        await always.close();
        await never.close();
      }
    });
  });
}

function signupSettingTests(ctx: AccountsContext): void {
  const { target, auth, expectEnvelope } = ctx;
  describe('SIGNUP', () => {
    let closed: App;
    beforeAll(async () => {
      // No SIGNUP at all: a service run on its own is closed.
      closed = await target.start(UNLIMITED);
    });
    afterAll(() => closed?.close());

    it('is closed by default: 403 signup_closed, before the body is even read, and no account is made', async () => {
      const res = await closed
        .http()
        .post(`${auth}/signup`)
        .send({ email: 'closed@example.test', password: PASSWORD })
        .expect(403);
      expectEnvelope(res.body, 'signup_closed');
      await closed.http().post(`${auth}/signup`).send({ nonsense: true }).expect(403);
      const rows = await closed.db
        .selectFrom('accounts')
        .select('id')
        .where('email', '=', 'closed@example.test')
        .execute();
      expect(rows).toHaveLength(0);
    });

    it('still lets operator-made accounts sign in', async () => {
      const { accountId } = await closed.adminWithStdin(
        `${PASSWORD}\n`,
        'create-account',
        '--email',
        'operator-made@example.test',
        '--password-stdin',
      );
      const res = await closed
        .http()
        .post(`${auth}/login`)
        .send({ email: 'operator-made@example.test', password: PASSWORD })
        .expect(200);
      expect(res.body).toEqual({ accountId, email: 'operator-made@example.test' });
    });

    it('is validated at start-up: another value stops the service with a line naming SIGNUP', () => {
      expect(() => target.loadConfig({ DATABASE_URL: 'postgres://localhost/x', SIGNUP: 'maybe' })).toThrow(
        /SIGNUP must be one of open, closed/,
      );
      expect(target.loadConfig({ DATABASE_URL: 'postgres://localhost/x', SIGNUP: 'open' })).toEqual(
        expect.objectContaining({ signup: 'open' }),
      );
    });
  });
}

function loginTests(ctx: AccountsContext): void {
  describe(`POST ${ctx.auth}/login`, () => {
    loginAnswerTests(ctx);
    loginThrottleTests(ctx);
    loginBodyTests(ctx);
  });
}

/** Sign-in answers: a new session each time, one 401 for every failure, in about the same time. */
function loginAnswerTests(ctx: AccountsContext): void {
  const { auth, newEmail, expectEnvelope, sessionCookie, signUp } = ctx;
  it('answers 200 with a new session token on every login; each works', async () => {
    const { email, accountId } = await signUp();
    const first = await ctx.t
      .http()
      .post(`${auth}/login`)
      .send({ email: ` ${email.toUpperCase()} `, password: PASSWORD })
      .expect(200);
    expect(first.body).toEqual({ accountId, email });
    const second = await ctx.t.http().post(`${auth}/login`).send({ email, password: PASSWORD }).expect(200);
    const a = sessionCookie(first);
    const b = sessionCookie(second);
    expect(a.pair).not.toBe(b.pair);
    expect(b.attributes).toMatch(/HttpOnly/);
    expect(b.attributes).toMatch(/SameSite=Lax/);
    await ctx.t.http().get(`${auth}/me`).set('Cookie', a.pair).expect(200);
    await ctx.t.http().get(`${auth}/me`).set('Cookie', b.pair).expect(200);
  });

  it('ends the session the browser held before signing in again', async () => {
    const { email, cookie } = await signUp();
    const res = await ctx.t
      .http()
      .post(`${auth}/login`)
      .set('Cookie', cookie)
      .send({ email, password: PASSWORD })
      .expect(200);
    await ctx.t.http().get(`${auth}/me`).set('Cookie', cookie).expect(401);
    await ctx.t.http().get(`${auth}/me`).set('Cookie', sessionCookie(res).pair).expect(200);
  });

  it('answers an unknown email, a wrong password and a password-less account with the same 401 invalid_credentials', async () => {
    const { email } = await signUp();
    const { accountId: noPassword } = await ctx.t.admin('create-account', '--email', 'no-password@example.test');
    expect(noPassword).toEqual(expect.any(String));
    const bodies = [];
    for (const body of [
      { email: newEmail(), password: PASSWORD },
      { email, password: 'wrong password' },
      { email: 'no-password@example.test', password: PASSWORD },
    ]) {
      const res = await ctx.t.http().post(`${auth}/login`).send(body).expect(401);
      expectEnvelope(res.body, 'invalid_credentials');
      expect(res.headers['set-cookie']).toBeUndefined();
      const { requestId: _ignored, ...rest } =
        typeof res.body.error === 'string' ? { requestId: '', text: res.body.error } : res.body.error;
      bodies.push(rest);
    }
    expect(bodies[1]).toEqual(bodies[0]);
    expect(bodies[2]).toEqual(bodies[0]);
  });

  it('takes about as long for an unknown email as for a wrong password (both verify a hash)', async () => {
    const { email } = await signUp();
    // The CPU time the process (app and client, hashing threads included) spends on each: the
    // work, which a loaded machine does not change. Wall time did: in whole CI runs the fastest
    // unknown email came at under half the fastest wrong password, hash and all. Without the
    // dummy hash, unknown emails took 3-4 ms against 13-16 ms.
    const time = async (body: object) => {
      const started = process.cpuUsage();
      await ctx.t.http().post(`${auth}/login`).send(body).expect(401);
      const used = process.cpuUsage(started);
      return (used.user + used.system) / 1000;
    };
    const unknown: number[] = [];
    const wrong: number[] = [];
    // Interleaved, and under the throttle's 10 failures for the known email.
    for (let i = 0; i < 5; i++) {
      unknown.push(await time({ email: newEmail(), password: 'wrong password' }));
      wrong.push(await time({ email, password: `wrong password ${i}` }));
    }
    // Skipping the hash would make an unknown email several times cheaper. The least of each:
    // other work in the process (a timer, the collector) only adds to a sample.
    expect(Math.min(...unknown)).toBeGreaterThan(Math.min(...wrong) * 0.5);
  });
}

/** The failed sign-in throttles: per email, per client address, across replicas and without Redis. */
function loginThrottleTests(ctx: AccountsContext): void {
  const { target, auth, newEmail, expectEnvelope, signUp } = ctx;
  it('after 10 failures for one email answers 429 with Retry-After, even for the right password, on every instance', async () => {
    const { email } = await signUp();
    for (let i = 0; i < 10; i++)
      await ctx.t
        .http()
        .post(`${auth}/login`)
        .send({ email, password: `wrong ${i}` })
        .expect(401);
    const blocked = await ctx.t.http().post(`${auth}/login`).send({ email, password: PASSWORD }).expect(429);
    expectEnvelope(blocked.body, 'rate_limited');
    const retryAfter = Number(blocked.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(15 * 60);
    expect(blocked.headers['set-cookie']).toBeUndefined();
    // The count lives in Redis: a second instance of the service refuses too.
    const replica = await target.start(UNLIMITED, { shareWith: ctx.t });
    try {
      await replica.http().post(`${auth}/login`).send({ email, password: PASSWORD }).expect(429);
    } finally {
      await replica.close();
    }
    // Other emails are not affected.
    const other = await signUp();
    await ctx.t.http().post(`${auth}/login`).send({ email: other.email, password: PASSWORD }).expect(200);
  });

  it('counts a failure before the hash is checked: 200 parallel wrong passwords for one email get at most 10 x 401, the rest 429', async () => {
    const { email } = await signUp();
    const address = `198.51.100.${1 + Math.floor(Math.random() * 250)}`;
    const statuses = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        ctx.t
          .http()
          .post(`${auth}/login`)
          .set('X-Forwarded-For', address)
          .send({ email, password: `wrong ${i}` })
          .then((r) => r.status),
      ),
    );
    const count = (status: number) => statuses.filter((s) => s === status).length;
    expect(count(401) + count(429)).toBe(200);
    expect(count(401)).toBeGreaterThan(0);
    expect(count(401)).toBeLessThanOrEqual(10);
    // Still blocked for the right password afterwards.
    await ctx.t
      .http()
      .post(`${auth}/login`)
      .set('X-Forwarded-For', address)
      .send({ email, password: PASSWORD })
      .expect(429);
  });

  it('gives one client address at most 100 failed sign-ins across all emails, then 429 even for a right password', async () => {
    const { email } = await signUp();
    const address = `203.0.113.${1 + Math.floor(Math.random() * 250)}`;
    const attempt = (body: object, from = address) =>
      ctx.t.http().post(`${auth}/login`).set('X-Forwarded-For', from).send(body);
    // A right password is not a failure: it does not use up the address's budget.
    await attempt({ email, password: PASSWORD }).expect(200);
    for (let batch = 0; batch < 10; batch++) {
      const statuses = await Promise.all(
        Array.from({ length: 10 }, () =>
          attempt({ email: newEmail(), password: 'wrong password' }).then((r) => r.status),
        ),
      );
      expect(statuses).toEqual(Array(10).fill(401));
    }
    const blocked = await attempt({ email: newEmail(), password: 'wrong password' }).expect(429);
    expectEnvelope(blocked.body, 'rate_limited');
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(15 * 60);
    await attempt({ email, password: PASSWORD }).expect(429);
    // Another address is not affected.
    await attempt({ email, password: PASSWORD }, '192.0.2.77').expect(200);
    // 103 sign-ins, each a password hash (an unknown email's too): 1.8 s on an idle machine, 11 s
    // beside 18 busy loops, and past the default 30 s under npm test's three lanes on two cores.
  }, 120_000);

  it('throttles in process too when Redis is not configured', async () => {
    const single = await target.start({ ...UNLIMITED, SIGNUP: 'open' }, { withoutRedis: true });
    try {
      const email = newEmail();
      await single.http().post(`${auth}/signup`).send({ email, password: PASSWORD }).expect(201);
      for (let i = 0; i < 10; i++)
        await single
          .http()
          .post(`${auth}/login`)
          .send({ email, password: `wrong ${i}` })
          .expect(401);
      const res = await single.http().post(`${auth}/login`).send({ email, password: PASSWORD }).expect(429);
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    } finally {
      await single.close();
    }
  });
}

/** Bodies a sign-in refuses, and what its log leaves out. */
function loginBodyTests(ctx: AccountsContext): void {
  const { auth, logLines, newEmail, expectEnvelope, sessionCookie } = ctx;
  it.each([
    ['a NUL in the email', { email: 'a\u0000b@example.test', password: PASSWORD }],
    ['a NUL in the password', { email: 'a@example.test', password: 'pass\u0000word' }],
    ['a NUL in a property name', { email: 'a@example.test', password: PASSWORD, 'x\u0000': 1 }],
  ])('answers 400, never a 500, for %s (sign-up and login)', async (_name, body) => {
    for (const path of ['signup', 'login']) {
      const res = await ctx.t.http().post(`${auth}/${path}`).send(body).expect(400);
      expectEnvelope(res.body, 'validation_failed');
    }
  });

  it('answers 400 for a body nested deeper than 64 levels (60,000 deep included)', async () => {
    for (const depth of [65, 60_000]) {
      const deep = `${'['.repeat(depth)}${']'.repeat(depth)}`;
      const res = await ctx.t
        .http()
        .post(`${auth}/login`)
        .set('Content-Type', 'application/json')
        .send(`{"email":"a@example.test","password":"x","deep":${deep}}`)
        .expect(400);
      expectEnvelope(res.body, 'validation_failed');
    }
  });

  it('answers 400 for a missing field and 403 for a foreign Origin', async () => {
    const missing = await ctx.t.http().post(`${auth}/login`).send({ email: 'a@example.test' }).expect(400);
    expectEnvelope(missing.body, 'validation_failed');
    const foreign = await ctx.t
      .http()
      .post(`${auth}/login`)
      .set('Origin', 'https://evil.example')
      .send({ email: 'a@example.test', password: PASSWORD })
      .expect(403);
    expectEnvelope(foreign.body, 'cross_origin');
  });

  it('never writes a password or a session token to the log', async () => {
    const secret = 'log-canary-password-93ab';
    const email = newEmail();
    logLines.length = 0;
    const created = await ctx.t.http().post(`${auth}/signup`).send({ email, password: secret }).expect(201);
    await ctx.t
      .http()
      .post(`${auth}/login`)
      .send({ email, password: `${secret}-wrong` })
      .expect(401);
    await new Promise((r) => setTimeout(r, 50));
    const all = logLines.join('\n');
    expect(all).toContain(`${auth}/signup`);
    expect(all).not.toContain(secret);
    expect(all).not.toContain(sessionCookie(created).pair.split('=')[1]!);
  });
}

function logoutTests(ctx: AccountsContext): void {
  const { target, auth, cookieName, expectEnvelope, sessionCookie, signUp } = ctx;
  describe(`POST ${auth}/logout`, () => {
    it('answers 204, revokes the session server-side and clears the cookie', async () => {
      const { cookie } = await signUp();
      const res = await ctx.t.http().post(`${auth}/logout`).set('Cookie', cookie).expect(204);
      const cleared = sessionCookie(res);
      expect(cleared.pair).toBe(`${cookieName}=`);
      expect(cleared.attributes).toMatch(/Expires=Thu, 01 Jan 1970/);
      // The old cookie, replayed, no longer works anywhere.
      const me = await ctx.t.http().get(`${auth}/me`).set('Cookie', cookie).expect(401);
      expectEnvelope(me.body, 'unauthorized');
      await ctx.t.http().get(target.keysPath).set('Cookie', cookie).expect(401);
    });

    it('answers 204 without a session too, and 403 for a foreign Origin', async () => {
      await ctx.t.http().post(`${auth}/logout`).expect(204);
      await ctx.t.http().post(`${auth}/logout`).set('Cookie', `${cookieName}=sid_nonsense`).expect(204);
      const { cookie } = await signUp();
      const res = await ctx.t
        .http()
        .post(`${auth}/logout`)
        .set('Cookie', cookie)
        .set('Origin', 'https://evil.example')
        .expect(403);
      expectEnvelope(res.body, 'cross_origin');
      await ctx.t.http().get(`${auth}/me`).set('Cookie', cookie).expect(200);
    });
  });
}

function meTests(ctx: AccountsContext): void {
  const { auth, newEmail, expectEnvelope, sessionCookie, signUp } = ctx;
  describe(`GET and PATCH ${auth}/me`, () => {
    it('answers the signed-in account, 401 without a session, 403 for an API key or a foreign Origin', async () => {
      const { cookie, accountId, email } = await signUp();
      const me = await ctx.t.http().get(`${auth}/me`).set('Cookie', cookie).expect(200);
      expect(me.body).toEqual({ accountId, email, timezone: 'UTC' });
      expectEnvelope((await ctx.t.http().get(`${auth}/me`).expect(401)).body, 'unauthorized');
      const key = await ctx.t.admin('create-key', '--account', accountId);
      expectEnvelope(
        (await ctx.t.http().get(`${auth}/me`).set('Authorization', `Bearer ${key.key}`).expect(403)).body,
        'session_required',
      );
      expectEnvelope(
        (await ctx.t.http().get(`${auth}/me`).set('Cookie', cookie).set('Origin', 'https://evil.example').expect(403))
          .body,
        'cross_origin',
      );
    });

    it('changes the time zone; an unknown zone or another field is 400', async () => {
      const { cookie, accountId, email } = await signUp();
      const res = await ctx.t
        .http()
        .patch(`${auth}/me`)
        .set('Cookie', cookie)
        .send({ timezone: 'America/New_York' })
        .expect(200);
      expect(res.body).toEqual({ accountId, email, timezone: 'America/New_York' });
      expect((await ctx.t.http().get(`${auth}/me`).set('Cookie', cookie).expect(200)).body.timezone).toBe(
        'America/New_York',
      );
      for (const body of [{ timezone: 'Mars/Base' }, {}, { timezone: 'UTC', email: 'x@example.test' }]) {
        const bad = await ctx.t.http().patch(`${auth}/me`).set('Cookie', cookie).send(body).expect(400);
        expectEnvelope(bad.body, 'validation_failed');
      }
      await ctx.t.http().patch(`${auth}/me`).send({ timezone: 'UTC' }).expect(401);
      expect((await ctx.t.http().get(`${auth}/me`).set('Cookie', cookie).expect(200)).body.timezone).toBe(
        'America/New_York',
      );
    });

    it('stores a zone in its canonical spelling whatever the letter case sent', async () => {
      const res = await ctx.t
        .http()
        .post(`${auth}/signup`)
        .send({ email: newEmail(), password: PASSWORD, timezone: 'eUROPE/bERLIN' })
        .expect(201);
      const cookie = sessionCookie(res).pair;
      expect((await ctx.t.http().get(`${auth}/me`).set('Cookie', cookie).expect(200)).body.timezone).toBe(
        'Europe/Berlin',
      );
      expect(
        (await ctx.t.http().patch(`${auth}/me`).set('Cookie', cookie).send({ timezone: 'asia/KOLKATA' }).expect(200))
          .body.timezone,
      ).toBe('Asia/Kolkata');
      const row = await ctx.t.db
        .selectFrom('accounts')
        .select('timezone')
        .where('id', '=', res.body.accountId)
        .executeTakeFirstOrThrow();
      expect(row.timezone).toBe('Asia/Kolkata');
    });
  });
}

function keyNameTests(ctx: AccountsContext): void {
  const { target, expectEnvelope, signUp } = ctx;
  describe('keys', () => {
    it('answers 400, never a 500, for a NUL in a key name', async () => {
      const { cookie } = await signUp();
      const res = await ctx.t
        .http()
        .post(target.keysPath)
        .set('Cookie', cookie)
        .send({ name: 'bad\u0000name', scopes: [target.scopes[0]] })
        .expect(400);
      expectEnvelope(res.body, 'validation_failed');
    });
  });
}

function lastUsedAtTests(ctx: AccountsContext): void {
  const { target, signUp } = ctx;
  describe('lastUsedAt of keys', () => {
    it('is null until the key is used, then set (and not rewritten within the minute)', async () => {
      const { cookie } = await signUp();
      const created = await ctx.t
        .http()
        .post(target.keysPath)
        .set('Cookie', cookie)
        .send({ name: 'script', scopes: [target.scopes[0]] })
        .expect(201);
      expect(created.body.lastUsedAt).toBeNull();
      const listed = async () =>
        (await ctx.t.http().get(target.keysPath).set('Cookie', cookie).expect(200)).body.items[0].lastUsedAt as
          string | null;
      expect(await listed()).toBeNull();
      await ctx.t.http().get(target.readPath).set('Authorization', `Bearer ${created.body.key}`).expect(200);
      let first: string | null = null;
      for (let i = 0; i < 50 && first === null; i++) {
        first = await listed();
        if (first === null) await new Promise((r) => setTimeout(r, 100));
      }
      expect(first).not.toBeNull();
      expect(Math.abs(Date.parse(first!) - Date.now())).toBeLessThan(60_000);
      await ctx.t.http().get(target.readPath).set('Authorization', `Bearer ${created.body.key}`).expect(200);
      await new Promise((r) => setTimeout(r, 300));
      expect(await listed()).toBe(first);
    });
  });
}

function adminPasswordTests(ctx: AccountsContext): void {
  const { auth, newEmail, signUp } = ctx;
  describe('admin password commands', () => {
    it('create-account --password-stdin gives an account that can sign in; the password is never an argument', async () => {
      const email = newEmail();
      const created = await ctx.t.adminWithStdin(
        `${PASSWORD}\n`,
        'create-account',
        '--email',
        email,
        '--password-stdin',
      );
      expect(created.accountId).toEqual(expect.any(String));
      await ctx.t.http().post(`${auth}/login`).send({ email, password: PASSWORD }).expect(200);
      await expect(
        ctx.t.adminWithStdin('short\n', 'create-account', '--email', newEmail(), '--password-stdin'),
      ).rejects.toThrow(/8 to 256 characters/);
      await expect(ctx.t.admin('create-account', '--email', newEmail(), '--password', PASSWORD)).rejects.toThrow(
        /Unknown option '--password'/,
      );
    });

    it("set-password replaces the password from stdin and ends the account's sessions", async () => {
      const { email, accountId, cookie } = await signUp();
      const result = await ctx.t.adminWithStdin('a brand new password\n', 'set-password', '--account', accountId);
      expect(result).toEqual({ accountId, passwordSet: true, sessionsRevoked: 1, grantsRevoked: 0 });
      await ctx.t.http().get(`${auth}/me`).set('Cookie', cookie).expect(401);
      await ctx.t.http().post(`${auth}/login`).send({ email, password: PASSWORD }).expect(401);
      await ctx.t.http().post(`${auth}/login`).send({ email, password: 'a brand new password' }).expect(200);
      await expect(
        ctx.t.adminWithStdin(`${PASSWORD}\n`, 'set-password', '--account', '00000000-0000-0000-0000-000000000000'),
      ).rejects.toThrow(/no account/);
      await expect(ctx.t.admin('set-password', '--account', accountId)).rejects.toThrow(/standard input/);
    });
  });
}

function accountPageTests(ctx: AccountsContext): void {
  const svc = ctx.target.service;
  const { target, signUp } = ctx;
  describe(`GET /account/${svc}`, () => {
    it('serves the page with its own assets under a strict CSP: no inline script or style', async () => {
      const res = await ctx.t.raw().get(`/account/${svc}`).expect(200);
      expect(res.headers['content-type']).toMatch(/text\/html/);
      const csp = res.headers['content-security-policy'] as string;
      expect(csp).toMatch(/script-src 'self'/);
      expect(csp).toMatch(/script-src-attr 'none'/);
      expect(csp).not.toMatch(/script-src[^;]*unsafe-inline/);
      const html = res.text;
      expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
      expect(html).not.toMatch(/\son[a-z]+=/i);
      expect(html).not.toMatch(/\sstyle=/i);
      expect(html).not.toMatch(/https?:\/\//);
      expect(html).toContain(`<script src="/account/${svc}/account.js" defer></script>`);
      expect(html).toMatch(/<label for="email">Email<\/label>/);
      expect(html).toMatch(/<label for="password">Password<\/label>/);
      expect(html).toMatch(/>Sign in</);
      expect(html).toMatch(/>Create account</);
      expect(html).toMatch(/<label for="key-name">Key name<\/label>/);
      expect(html).toContain('data-testid="new-key"');
      for (const scope of target.scopes) expect(html).toContain(`value="${scope}"> ${scope}</label>`);
      expect(html).toContain(`data-keys-path="${target.keysPath}"`);
      expect(html).toContain('data-signed-in="false"');
      const js = await ctx.t.raw().get(`/account/${svc}/account.js`).expect(200);
      expect(js.headers['content-type']).toMatch(/text\/javascript/);
      expect(js.text).toContain(`'/auth/' + service`);
      const css = await ctx.t.raw().get(`/account/${svc}/account.css`).expect(200);
      expect(css.headers['content-type']).toMatch(/text\/css/);
    });

    it('knows a signed-in visitor, hides "Create account" when sign-up is closed, and 404s unknown assets as JSON', async () => {
      const { cookie } = await signUp();
      expect((await ctx.t.raw().get(`/account/${svc}`).set('Cookie', cookie).expect(200)).text).toContain(
        'data-signed-in="true"',
      );
      const closed = await target.start(UNLIMITED);
      try {
        expect((await closed.raw().get(`/account/${svc}`).expect(200)).text).not.toMatch(/Create account/);
      } finally {
        await closed.close();
      }
      const missing = await ctx.t.raw().get(`/account/${svc}/nothing.js`).expect(404);
      expect(missing.headers['content-type']).toMatch(/application\/json/);
    });
  });
}
