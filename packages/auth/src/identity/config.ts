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

export function cookieName(cfg: AuthConfig): string {
  return `${cfg.service}_sid`;
}
