/*
 * The MCP request's HTTP auth answers: 401 with the RFC 9728 challenge without a credential, and,
 * after the fact, 401 for a caller gone during the request or 403 insufficient_scope (step-up)
 * for the scopes an OAuth token was found to lack, while nothing of the answer is sent yet.
 */
import type { Request, RequestHandler, Response } from 'express';
import { requireBearerAuth } from '@modelcontextprotocol/express';
import { OAuthError, OAuthErrorCode, ProtocolErrorCode } from '@modelcontextprotocol/server';
import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response';
import { oauthUrls, publicOrigin, toAuthInfo } from '../identity/bearer.js';
import type { Exchange, McpOptions } from './context.js';

// The caller was resolved by `identify` from this same Authorization header (a database outage
// there is already a 503), so the SDK's bearer check only decides 401 (or 403) and its challenge.
function bearerCheck(
  o: McpOptions,
  req: Request,
  res: Response,
  verify: (token: string) => ReturnType<typeof toAuthInfo>,
  next: () => void,
  requiredScopes?: string[],
) {
  const { resourceMetadata } = oauthUrls(o.auth.service, publicOrigin(req, o.publicUrl));
  return requireBearerAuth({
    verifier: { verifyAccessToken: async (token) => verify(token) },
    resourceMetadataUrl: resourceMetadata,
    requiredScopes,
  })(req, res, next);
}

const keyCaller = (req: Request) => (req.caller?.kind === 'key' ? req.caller : undefined);

/** Bearer API keys and OAuth access tokens only; without one, 401 with the RFC 9728 `resource_metadata` challenge. */
export function bearer(o: McpOptions): RequestHandler {
  return (req, res, next) => {
    void bearerCheck(o, req, res, (token) => toAuthInfo(token, keyCaller(req)), next);
  };
}

/**
 * A tool call refused for want of `needed`: for an OAuth token, the MCP request's answer is the
 * step-up challenge (HTTP 403 insufficient_scope naming them), so the client can ask the user for
 * them; an API key's scopes are the operator's to change, so it gets the isError result.
 */
export function stepUp(x: Exchange, needed: readonly string[]): void {
  if (x.req.caller?.oauth) x.stepUp = [...needed];
}

/**
 * The bearer check's own answer for what a tool call found: 401 and its challenge for a caller
 * gone during the request, or 403 insufficient_scope naming the scopes a token lacks (step-up).
 */
function challenge(o: McpOptions, x: Exchange) {
  const { req, res } = x;
  if (x.callerGone) {
    return bearerCheck(
      o,
      req,
      res,
      () => {
        throw new OAuthError(
          OAuthErrorCode.InvalidToken,
          'The API key or access token was revoked or expired during this request',
        );
      },
      () => {},
    );
  }
  return bearerCheck(
    o,
    req,
    res,
    (token) => toAuthInfo(token, keyCaller(req)),
    () => {},
    x.stepUp,
  );
}

/** Nothing is sent yet (JSON, or a stream whose first event is its end): the 401, 403 or 503 is the answer (then RESPONSE_ALREADY_SENT for the first two). */
export async function settle(o: McpOptions, x: Exchange, response: globalThis.Response): Promise<globalThis.Response> {
  if (!x.callerGone && !x.stepUp && !x.unavailable) return response;
  await response.body?.cancel();
  if (x.unavailable) {
    const message =
      'The confirmation could not be checked for reuse (Redis, which records used confirmations across replicas, is unavailable): nothing was changed; send the same retry again shortly';
    return globalThis.Response.json(
      { jsonrpc: '2.0', error: { code: ProtocolErrorCode.InternalError, message }, id: null },
      { status: 503, headers: { 'Retry-After': '2' } },
    );
  }
  await challenge(o, x);
  return RESPONSE_ALREADY_SENT;
}
