import type { RequestHandler } from 'express';

// The Mcp-* headers and WWW-Authenticate (the OAuth challenge) serve MCP clients in a browser page.
const ALLOW_HEADERS =
  'Authorization, Content-Type, Idempotency-Key, If-Match, X-Timezone, X-Request-Id, Mcp-Protocol-Version, Mcp-Session-Id';
const EXPOSE_HEADERS =
  'ETag, Location, Retry-After, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, X-Request-Id, WWW-Authenticate, Mcp-Session-Id';
const ALLOW_METHODS = 'GET, POST, PUT, PATCH, DELETE, OPTIONS';

/**
 * CORS: any origin may call with an API key (no credentials); only the allowed origins are told
 * they may send credentials (the session cookie). Preflights are answered here with 204.
 */
export function cors(allowedOrigins: readonly string[]): RequestHandler {
  const allowed = new Set(allowedOrigins);
  return (req, res, next) => {
    const origin = req.get('origin');
    if (origin === undefined) return next();
    res.vary('Origin');
    if (allowed.has(origin)) {
      res.setHeader('Access-Control-Allow-Origin', origin);
      res.setHeader('Access-Control-Allow-Credentials', 'true');
    } else {
      res.setHeader('Access-Control-Allow-Origin', '*');
    }
    res.setHeader('Access-Control-Expose-Headers', EXPOSE_HEADERS);
    if (req.method === 'OPTIONS' && req.get('access-control-request-method') !== undefined) {
      res.setHeader('Access-Control-Allow-Methods', ALLOW_METHODS);
      res.setHeader('Access-Control-Allow-Headers', ALLOW_HEADERS);
      res.setHeader('Access-Control-Max-Age', '600');
      res.status(204).end();
      return;
    }
    next();
  };
}
