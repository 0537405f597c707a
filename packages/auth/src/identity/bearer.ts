import type { Request } from 'express';
import { OAuthError, OAuthErrorCode, type AuthInfo } from '@modelcontextprotocol/server';
import type { Caller } from './middleware.js';

// A bearer credential as the MCP endpoint and the OAuth server both see it: where a token is
// valid (the resource URLs of one origin) and what the SDK's bearer middleware is told of its
// caller. Here, below both, so neither imports the other.

/** Access tokens live an hour (DESIGN: within 1 h). */
export const ACCESS_TOKEN_TTL_SECONDS = 3600;

/**
 * The origin clients reach the service at: PUBLIC_URL when set, otherwise the one this request
 * came through (the gateway passes its Host and scheme; `trust proxy` decides whether to believe
 * them), so metadata read through http://localhost:8080 names http://localhost:8080.
 */
export function publicOrigin(req: Request, publicUrl: string | undefined): string {
  return publicUrl ?? `${req.protocol}://${req.host}`;
}

/** A URL as URL parsing spells it; a Host header that makes no URL is left as it came (it matches nothing). */
function canonicalUrl(url: string): string {
  try {
    return new URL(url).href;
  } catch {
    return url;
  }
}

/** The MCP endpoint, its protected-resource metadata and its authorization server, for one origin. */
export function oauthUrls(service: string, origin: string) {
  return {
    // As URL parsing spells it (lower-case host, no default port): the form a client's `resource` is compared in.
    resource: canonicalUrl(`${origin}/mcp/${service}`),
    resourceMetadata: `${origin}/.well-known/oauth-protected-resource/mcp/${service}`,
    issuer: `${origin}/oauth/${service}`,
  };
}

/**
 * What the SDK's bearer middleware needs to know of a resolved caller. An API key does not
 * expire; it is given an hour like an access token, since the middleware requires an expiry and
 * every request resolves the key again anyway.
 */
export function toAuthInfo(token: string, caller: Caller | undefined): AuthInfo {
  if (!caller)
    throw new OAuthError(OAuthErrorCode.InvalidToken, 'The API key or access token is invalid, expired or revoked');
  return {
    token,
    clientId: caller.oauth ? 'oauth' : 'api-key',
    scopes: [...caller.scopes],
    expiresAt: caller.oauth?.expiresAt ?? Math.floor(Date.now() / 1000) + ACCESS_TOKEN_TTL_SECONDS,
    extra: { accountId: caller.accountId },
  };
}
