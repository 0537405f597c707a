/** What the identity layer needs to know about the service it protects. */
export interface AuthConfig {
  /** `tasks`, `meetings` or `clipboard`: names the cookie (`<service>_sid`) and the key prefix. */
  service: string;
  /** Every scope the service knows; a session holds all of them. */
  scopes: readonly string[];
  /** Origins whose browser sessions are same-site; any other `Origin` on a session call is 403. */
  allowedOrigins: readonly string[];
  /** Session lifetime in seconds. */
  sessionTtlSeconds?: number;
}

export const DEFAULT_SESSION_TTL_SECONDS = 30 * 24 * 3600;

/** The identity layer's settings for a declared service (the admin command has no origins). */
export function authConfig(
  service: { name: string; scopes: readonly string[] },
  allowedOrigins: readonly string[] = [],
): AuthConfig {
  return { service: service.name, scopes: service.scopes, allowedOrigins };
}

/** The session cookie's name over plain http: `<service>_sid`. */
export function cookieName(cfg: AuthConfig): string {
  return `${cfg.service}_sid`;
}

/**
 * The session cookie's name whenever it is `Secure`: `__Host-<service>_sid`, which a browser keeps
 * only from an https origin, with `Path=/` and no `Domain`, so a sibling subdomain cannot plant it.
 */
export function secureCookieName(cfg: AuthConfig): string {
  return `__Host-${cookieName(cfg)}`;
}

/**
 * `COOKIE_SECURE`: `always` and `never` say it outright; `auto` marks the cookie `Secure` when the
 * request came over https (`req.secure`: TLS here, or `X-Forwarded-Proto` from the trusted proxy).
 */
export type CookieSecure = 'auto' | 'always' | 'never';

/** Whether this request's session cookie is `Secure`, and so named `__Host-<service>_sid`. */
export function secureCookies(mode: CookieSecure, req: { secure: boolean }): boolean {
  return mode === 'always' || (mode === 'auto' && req.secure);
}

/**
 * The cookie names a request's session is read from: where cookies are `Secure`, only the
 * `__Host-` name (a sibling subdomain can plant a plain `<service>_sid`, never a `__Host-` one);
 * otherwise either.
 */
export function sessionCookieNames(
  cfg: AuthConfig,
  mode: CookieSecure,
  req: { secure: boolean },
): { secure: string; plain?: string } {
  return secureCookies(mode, req)
    ? { secure: secureCookieName(cfg) }
    : { secure: secureCookieName(cfg), plain: cookieName(cfg) };
}
