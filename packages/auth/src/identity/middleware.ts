import type { RequestHandler, Request } from 'express';
import { errors } from '@app/http-errors';
import { sessionCookieNames, type AuthConfig, type CookieSecure } from './config.js';
import { CredentialCache } from './credential-cache.js';
import { findAccessToken, findKeyByHash, findSessionByHash, type AnyDb, type IdentityRow } from './repository.js';
import { canonicalTimezone } from './timezones.js';
import { OAUTH_ACCESS_PREFIX, hashSecret, readSessionCookie } from './tokens.js';

/** Who is calling: resolved once per request by {@link identify}. */
export interface Caller {
  accountId: string;
  kind: 'key' | 'session';
  /** The key's or session's id. */
  credentialId: string;
  /** A key's scopes; a session holds every scope of the service. */
  scopes: ReadonlySet<string>;
  /** The account's time zone (IANA). */
  timezone: string;
  /**
   * Set for an OAuth access token (a connected app): it acts as an API key with the consented
   * scopes (kind `key`), and `credentialId` is its grant's id; `tokenId` names the access token
   * itself (its stored hash, in hex: what its revocation announces).
   */
  oauth?: { expiresAt: number; resource: string | null; tokenId: string };
}

/** A zone read from the database, canonically spelled (rows written before names were canonical may differ in case). */
const storedZone = (zone: string) => canonicalTimezone(zone) ?? 'UTC';

/** Resolves credentials to callers, through one cache per app (see credential-cache.ts). */
export interface CredentialResolver {
  /** An API key or OAuth access token; undefined when unknown, revoked or expired. */
  bearer(token: string): Promise<Caller | undefined>;
  session(token: string): Promise<Caller | undefined>;
}

/**
 * The app's resolver. `onUsed` hears of every request made with a key or an OAuth token (to
 * record when it was last used).
 */
export function createCredentialResolver(
  db: AnyDb,
  cfg: AuthConfig,
  onUsed: (credentialId: string, kind: 'key' | 'oauth') => void = () => {},
): CredentialResolver {
  const allScopes = new Set(cfg.scopes);
  const credentials = new CredentialCache();
  const asKey = (row: IdentityRow, hash: Buffer, oauth: boolean): Caller => ({
    accountId: row.accountId,
    kind: 'key',
    credentialId: row.credentialId,
    scopes: new Set(row.scopes ?? []),
    timezone: storedZone(row.timezone),
    ...(oauth
      ? { oauth: { expiresAt: row.expiresAt!, resource: row.resource ?? null, tokenId: hash.toString('hex') } }
      : {}),
  });
  return {
    async bearer(token) {
      const hash = hashSecret(token);
      const oauth = token.startsWith(`${OAUTH_ACCESS_PREFIX}_`);
      const row = oauth
        ? await credentials.resolve('oauth', hash, () => findAccessToken(db, hash))
        : await credentials.resolve('key', hash, () => findKeyByHash(db, hash));
      if (!row) return undefined;
      onUsed(row.credentialId, oauth ? 'oauth' : 'key');
      return asKey(row, hash, oauth);
    },
    async session(token) {
      const hash = hashSecret(token);
      const row = await credentials.resolve('session', hash, () => findSessionByHash(db, hash));
      return (
        row && {
          accountId: row.accountId,
          kind: 'session',
          credentialId: row.credentialId,
          scopes: allScopes,
          timezone: storedZone(row.timezone),
        }
      );
    },
  };
}

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace -- Express types Request through its global namespace; augmenting it is the only way to add a field
  namespace Express {
    interface Request {
      caller?: Caller;
      /** Why credentials that were sent did not identify anyone. */
      authFailure?: string;
    }
  }
}

const BEARER = /^Bearer[ ]+([A-Za-z0-9._~+/=-]{1,512})[ ]*$/i;

export interface IdentifyOptions {
  /** This service's MCP URL as the request reaches it: an OAuth access token issued for another resource is refused. */
  ownResource(req: Request): string;
  /** `COOKIE_SECURE`: with `Secure` cookies in force, only the `__Host-` name is read. */
  cookieSecure: CookieSecure;
}

/**
 * Resolves the caller from `Authorization: Bearer <key or OAuth access token>` or, without that
 * header, the service's session cookie (through a cache of up to a second: see
 * credential-cache.ts). Where cookies are `Secure` (COOKIE_SECURE=always, or auto over https)
 * only `__Host-<service>_sid` is read: a sibling subdomain can plant a plain `<service>_sid`, never
 * a `__Host-` one. Rejects nothing: rate limiting runs next (keyed by the account when there is
 * one), then {@link authenticate} answers 401/403.
 */
export function identify(cfg: AuthConfig, credentials: CredentialResolver, o: IdentifyOptions): RequestHandler {
  return async (req, _res, next) => {
    const header = req.get('authorization');
    if (header !== undefined) {
      const match = BEARER.exec(header);
      if (!match) {
        req.authFailure = 'Authorization header must be "Bearer <API key>"';
        return next();
      }
      const caller = await credentials.bearer(match[1]!);
      // RFC 8707: a token bound to another server (a grant made for it) is no credential here.
      if (caller?.oauth?.resource && caller.oauth.resource !== o.ownResource(req))
        req.authFailure = 'The access token was issued for another resource';
      else if (!caller) req.authFailure = 'API key is invalid or revoked';
      else req.caller = caller;
      return next();
    }
    const token = readSessionCookie(req.headers.cookie, sessionCookieNames(cfg, o.cookieSecure, req));
    if (token !== undefined) {
      req.caller = await credentials.session(token);
      if (!req.caller) req.authFailure = 'Session is invalid or expired';
    }
    next();
  };
}

/**
 * 401 without a caller; 403 for a browser session whose `Origin` is not one of the service's
 * allowed origins (API keys may be used from any origin; no `Origin` means same-origin).
 */
export function authenticate(cfg: AuthConfig): RequestHandler {
  const sameOrigin = requireAllowedOrigin(cfg);
  return (req, res, next) => {
    const caller = req.caller;
    if (!caller) return next(errors.unauthorized(req.authFailure));
    if (caller.kind === 'session') return sameOrigin(req, res, next);
    next();
  };
}

/**
 * 403 `cross_origin` when the request carries an `Origin` that is not one of the service's allowed
 * origins: for session calls and for sign-up, login and logout, which a foreign page must not drive.
 */
export function requireAllowedOrigin(cfg: AuthConfig): RequestHandler {
  const allowed = new Set(cfg.allowedOrigins);
  return (req, _res, next) => {
    const origin = req.get('origin');
    if (origin !== undefined && !allowed.has(origin)) {
      return next(errors.forbidden('cross_origin', 'Cross-origin requests must use an API key'));
    }
    next();
  };
}

/** 403 unless the caller holds `scope` (sessions hold every scope). */
export function requireScope(scope: string): RequestHandler {
  return (req, _res, next) => {
    if (!req.caller?.scopes.has(scope)) {
      return next(errors.forbidden('insufficient_scope', `This request needs the scope ${scope}`));
    }
    next();
  };
}

/**
 * 403 unless the caller holds `read` (GET, HEAD) or `write` (any other method). Mounted before
 * the body parser, so a key without the scope gets its 403 before a malformed body's 400.
 */
export function requireScopeForMethod(read: string, write: string): RequestHandler {
  const reads = requireScope(read);
  const writes = requireScope(write);
  return (req, res, next) => (req.method === 'GET' || req.method === 'HEAD' ? reads : writes)(req, res, next);
}

/** 403 for API keys: the route is for browser sessions only. */
export function requireSession(): RequestHandler {
  return (req, _res, next) => {
    if (req.caller?.kind !== 'session') {
      return next(errors.forbidden('session_required', 'This request needs a browser session; API keys cannot use it'));
    }
    next();
  };
}

/**
 * The caller's time zone, canonically spelled: `X-Timezone` when sent (an unknown name is 400
 * `validation_failed` with the path `X-Timezone`), else the account's.
 */
export function callerTimezone(req: Request): string {
  const header = req.get('x-timezone');
  if (header !== undefined) {
    const zone = canonicalTimezone(header);
    if (zone === undefined) {
      throw errors.validation(
        [{ path: 'X-Timezone', message: 'must be an IANA time zone name' }],
        'X-Timezone must be an IANA time zone name',
      );
    }
    return zone;
  }
  return req.caller?.timezone ?? 'UTC';
}

/**
 * 400 for an unknown `X-Timezone` on every route behind it, whether or not the route works in
 * the caller's zone: a client that sends a zone learns at once that it is wrong. Mounted after
 * the scope check and before the body, in the order of checks.
 */
export function checkTimezoneHeader(): RequestHandler {
  return (req, _res, next) => {
    if (req.headers['x-timezone'] !== undefined) callerTimezone(req);
    next();
  };
}
