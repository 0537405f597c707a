import { Router, type CookieOptions, type Request, type RequestHandler, type Response } from 'express';
import { ipKeyGenerator } from 'express-rate-limit';
import { errors } from '@app/http-errors';
import { compileBody } from '@app/http-errors/validation';
import { EMAIL_PATTERN, normalizeEmail, type AccountService } from './accounts.js';
import {
  DEFAULT_SESSION_TTL_SECONDS,
  cookieName,
  secureCookieName,
  secureCookies,
  sessionCookieNames,
  type AuthConfig,
  type CookieSecure,
} from './config.js';
import { forgetCredential } from './credential-cache.js';
import { authenticate, requireAllowedOrigin, requireSession } from './middleware.js';
import { canonicalTimezone } from './timezones.js';
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from './passwords.js';
import { readSessionCookie } from './tokens.js';

const email = {
  type: 'string',
  minLength: 3,
  maxLength: 254,
  pattern: EMAIL_PATTERN,
  description: 'trimmed and lower-cased first; at most 254 characters',
} as const;
const timezone = { type: 'string', minLength: 1, maxLength: 100, description: 'IANA time zone name' } as const;

/** Request bodies of the sign-in routes: compiled here once, and published in each OpenAPI document. */
export const authBodySchemas = {
  signUp: {
    type: 'object',
    additionalProperties: false,
    required: ['email', 'password'],
    properties: {
      email,
      password: { type: 'string', minLength: PASSWORD_MIN_LENGTH, maxLength: PASSWORD_MAX_LENGTH },
      timezone,
    },
  },
  // No minimum here: a short password is simply wrong, and saying so would hint at the rules.
  logIn: {
    type: 'object',
    additionalProperties: false,
    required: ['email', 'password'],
    properties: { email, password: { type: 'string', minLength: 1, maxLength: PASSWORD_MAX_LENGTH } },
  },
  updateAccount: { type: 'object', additionalProperties: false, required: ['timezone'], properties: { timezone } },
} as const;

const signUpBody = compileBody(authBodySchemas.signUp);
const logInBody = compileBody(authBodySchemas.logIn);
const updateBody = compileBody(authBodySchemas.updateAccount);

/** The body with its email trimmed and lower-cased, so the 254-character limit counts what is stored. */
function withNormalizedEmail(body: unknown): unknown {
  if (body && typeof body === 'object' && typeof (body as { email?: unknown }).email === 'string') {
    return { ...body, email: normalizeEmail((body as { email: string }).email) };
  }
  return body;
}

/** The zone's canonical name (any letter case accepted), or 400 for an unknown one. */
function checkTimezone(name: string | undefined): string | undefined {
  if (name === undefined) return undefined;
  const zone = canonicalTimezone(name);
  if (zone === undefined)
    throw errors.validation([{ path: '/timezone', message: 'must be an IANA time zone name, e.g. Europe/Berlin' }]);
  return zone;
}

export interface AuthRoutesOptions {
  cfg: AuthConfig;
  accounts: AccountService;
  signup: 'open' | 'closed';
  /** The service's JSON body parser (its body limit). */
  json: RequestHandler;
  /** When the session cookie is `Secure` (and named `__Host-<service>_sid`). */
  cookieSecure: CookieSecure;
}

/** A revoked session stops working in this process at once (other replicas: within a second). */
function forgetHeldSession(req: Request): void {
  if (req.caller?.kind === 'session') forgetCredential(req.caller.credentialId);
}

/**
 * `/auth/<service>`: `POST /signup`, `POST /login`, `POST /logout`, `GET` and `PATCH /me`.
 * Sign-up, login and logout refuse a foreign `Origin` first (403), then validate (400);
 * `/me` is for sessions only (401, then 403 for a foreign origin or an API key).
 */
export function authRouter(o: AuthRoutesOptions): Router {
  const names = { secure: secureCookieName(o.cfg), plain: cookieName(o.cfg) };
  const isSecure = (req: Request) => secureCookies(o.cookieSecure, req);
  const options = (secure: boolean): CookieOptions => ({ httpOnly: true, sameSite: 'lax', path: '/', secure });
  const signIn = (req: Request, res: Response, token: string) => {
    const secure = isSecure(req);
    res.cookie(secure ? names.secure : names.plain, token, {
      ...options(secure),
      maxAge: (o.cfg.sessionTtlSeconds ?? DEFAULT_SESSION_TTL_SECONDS) * 1000,
    });
  };
  const held = (req: Request) => readSessionCookie(req.headers.cookie, sessionCookieNames(o.cfg, o.cookieSecure, req));

  const router = Router();
  const json = o.json;
  const sameOrigin = requireAllowedOrigin(o.cfg);

  router.post(
    '/signup',
    sameOrigin,
    (_req, _res, next) => {
      next(
        o.signup === 'open'
          ? undefined
          : errors.forbidden('signup_closed', 'Sign-up is closed here; ask the operator for an account'),
      );
    },
    json,
    async (req, res) => {
      const body = signUpBody.parse(withNormalizedEmail(req.body ?? {}));
      const zone = checkTimezone(body.timezone);
      const { token, accountId, email } = await o.accounts.signUp({ ...body, timezone: zone });
      signIn(req, res, token);
      res.status(201).json({ accountId, email });
    },
  );

  router.post('/login', sameOrigin, json, async (req, res) => {
    const { token, accountId, email } = await o.accounts.logIn(
      logInBody.parse(withNormalizedEmail(req.body ?? {})),
      ipKeyGenerator(req.ip ?? ''),
    );
    // The session this browser held before is ended, so one sign-in leaves one live session.
    await o.accounts.logOut(held(req));
    forgetHeldSession(req);
    signIn(req, res, token);
    res.json({ accountId, email });
  });

  router.post('/logout', sameOrigin, async (req, res) => {
    await o.accounts.logOut(held(req));
    forgetHeldSession(req);
    // Whichever of the two names the browser holds: a `__Host-` cookie is cleared only as Secure.
    if (isSecure(req)) res.clearCookie(names.secure, options(true));
    res.clearCookie(names.plain, options(false));
    res.status(204).end();
  });

  const session: RequestHandler[] = [authenticate(o.cfg), requireSession()];
  router.get('/me', ...session, async (req, res) => {
    res.json(await o.accounts.get(req.caller!.accountId));
  });
  router.patch('/me', ...session, json, async (req, res) => {
    const { timezone: zone } = updateBody.parse(req.body ?? {});
    res.json(await o.accounts.setTimezone(req.caller!.accountId, checkTimezone(zone)!));
  });
  return router;
}
