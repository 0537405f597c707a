/*
 * The parts of the three OpenAPI documents that createServiceApp decides, so each document says
 * them the same way: where the API is called, how a caller authenticates, and the operational
 * routes every service mounts. Each app spreads these into its own document.
 */

const json = (schema: object, description: string) => ({ description, content: { 'application/json': { schema } } });
const readiness = (status: string) => ({
  type: 'object',
  additionalProperties: false,
  required: ['status', 'checks'],
  properties: {
    status: { const: status },
    checks: { type: 'object', additionalProperties: { type: 'string' }, description: 'postgres and redis: `ok`, `unavailable`, or (redis) `not configured (single-instance mode)`' },
  },
});

/**
 * "/" is wherever the document was fetched: through the gateway (`/openapi/<svc>.json`) that is
 * the gateway, on a service's own port the service. (A localhost entry would be flagged by the
 * lint's no-server-example.com rule, and "/" already reaches the local gateway from its pages.)
 */
export const openapiServers = [
  // x-internal: false says the audience (OWASP API9): the API is public, for key holders and browsers.
  { url: '/', description: 'The origin that served this document: the gateway (http://localhost:8080 under npm start and docker compose) or the service on its own port', 'x-internal': false },
];

/** The services are not published under a licence (see info-license-strict in redocly.yaml). */
export const openapiLicense = { name: 'Proprietary' };

/** `apiKey` (bearer key with scopes) and `session` (the service's own cookie). */
export function securitySchemes(service: string, scopes: readonly string[]) {
  return {
    apiKey: {
      type: 'http',
      scheme: 'bearer',
      description: `An API key: \`Authorization: Bearer <key>\`. It carries scopes (${scopes.join(', ')}; a missing one is 403) and works from any origin.`,
    },
    session: {
      type: 'apiKey',
      in: 'cookie',
      name: `${service}_sid`,
      description: 'A browser session (it holds every scope). A session request whose Origin is not in ALLOWED_ORIGINS is 403.',
    },
  };
}

/** The session-only key routes every service mounts (keysRouter). */
export const apiKeysTag = { name: 'API keys', description: 'The account\'s API keys, managed with a browser session only' };

export const operationsTag = {
  name: 'Operations',
  description: 'Process health, readiness, metrics and this document, on the service\'s own port. The gateway routes only the document, as `/openapi/<service>.json`.',
};

/** /healthz, /readyz, /metrics and /openapi.json: public, answered before authentication and limits. */
export const operationalPaths = {
  '/healthz': {
    get: {
      operationId: 'getHealth',
      tags: ['Operations'],
      summary: 'Process is up',
      security: [],
      responses: { '200': json({ type: 'object', additionalProperties: false, required: ['status'], properties: { status: { const: 'ok' } } }, 'Up') },
    },
  },
  '/readyz': {
    get: {
      operationId: 'getReadiness',
      tags: ['Operations'],
      summary: 'Postgres and Redis reachable',
      security: [],
      responses: { '200': json(readiness('ready'), 'Ready'), '503': json(readiness('unavailable'), 'A dependency is unavailable') },
    },
  },
  '/metrics': {
    get: {
      operationId: 'getMetrics',
      tags: ['Operations'],
      summary: 'Prometheus metrics',
      security: [],
      responses: { '200': { description: 'Prometheus text format', content: { 'text/plain': { schema: { type: 'string' } } } } },
    },
  },
  '/openapi.json': {
    get: {
      operationId: 'getOpenApiDocument',
      tags: ['Operations'],
      summary: 'This document',
      security: [],
      responses: { '200': json({ type: 'object' }, 'The OpenAPI 3.1 document') },
    },
  },
};

/** Routes answered before CORS and the rate limits (see createServiceApp): no such headers there. */
const UNLIMITED_PATHS = new Set(Object.keys(operationalPaths));
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];
const ref = (name: string) => ({ $ref: `#/components/headers/${name}` });
const count = (description: string) => ({ description, schema: { type: 'integer', format: 'int32', minimum: 0, maximum: 1_000_000 } });

/** The headers createServiceApp's rate limits (express-rate-limit, draft-6 names) and CORS add. */
const commonHeaders = {
  'RateLimit-Limit': count('Requests allowed in the current window (per account, or per client address before authentication).'),
  'RateLimit-Remaining': count('Requests left in the current window.'),
  'RateLimit-Reset': count('Seconds until the current window ends.'),
  'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer', format: 'int32', minimum: 1, maximum: 86_400 } },
  'RateLimit-Policy': { description: 'The limit and its window, e.g. `600;w=60`.', schema: { type: 'string', maxLength: 100 } },
  'Access-Control-Allow-Origin': {
    description: 'Sent when the request has an `Origin`: that origin when it is in ALLOWED_ORIGINS (with credentials), else `*` (API keys work from any origin).',
    schema: { type: 'string', maxLength: 2048 },
  },
};
const RATE_LIMIT_HEADERS = ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'RateLimit-Policy'] as const;

type Doc = { paths: Record<string, Record<string, { responses?: Record<string, ResponseLike> }>>; components: { headers?: Record<string, unknown>; responses?: Record<string, ResponseLike> } };
type ResponseLike = { $ref?: string; headers?: Record<string, unknown> };

/**
 * Documents, on every answer of every API operation, the headers the shared middleware adds: the
 * rate limits' `RateLimit-*` (2xx and 4xx: the answers a limited request can get; 429 with
 * `Retry-After`) and CORS's
 * `Access-Control-Allow-Origin` (all). One place, so no operation can leave them out; the
 * operational routes (health, metrics, this document) come before both and get neither.
 * Mutates and returns `doc`.
 */
export function documentCommonHeaders<D extends object>(doc: D): D {
  const d = doc as unknown as Doc;
  const used = new Set<keyof typeof commonHeaders>();
  const done = new Set<ResponseLike>();
  const target = (response: ResponseLike): ResponseLike => {
    const name = response.$ref?.replace('#/components/responses/', '');
    return name !== undefined ? d.components.responses![name]! : response;
  };
  for (const [path, item] of Object.entries(d.paths)) {
    if (UNLIMITED_PATHS.has(path)) continue;
    for (const method of METHODS) {
      for (const [status, response] of Object.entries(item[method]?.responses ?? {})) {
        const r = target(response);
        if (done.has(r)) continue;
        done.add(r);
        const names = [...(/^[24]/.test(status) ? RATE_LIMIT_HEADERS : []), ...(status === '429' ? ['Retry-After' as const] : []), 'Access-Control-Allow-Origin' as const]
          .filter((n) => r.headers?.[n] === undefined);
        for (const n of names) used.add(n);
        r.headers = { ...Object.fromEntries(names.map((n) => [n, ref(n)])), ...r.headers };
      }
    }
  }
  // Only the headers some answer refers to (an unused component is a lint warning).
  d.components.headers = { ...Object.fromEntries([...used].map((n) => [n, commonHeaders[n]])), ...d.components.headers };
  return doc;
}

/**
 * Names, on every operation that inherits the document's `apiKey` requirement, the scopes a key
 * needs for it (`[{ apiKey: [scopes] }, { session: [] }]`). The MCP tools are made from these, so
 * an operation is listed to a token exactly when the token may call it. Operations that state
 * their own security (public, session-only, or already scoped) are left as they are.
 */
export function withApiKeyScopes<T extends object>(document: T, scopesFor: (method: string, path: string) => string[]): T {
  const paths = (document as { paths?: Record<string, Record<string, unknown>> }).paths ?? {};
  for (const [path, item] of Object.entries(paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (!['get', 'put', 'post', 'patch', 'delete'].includes(method) || !op || typeof op !== 'object') continue;
      const operation = op as { security?: unknown };
      if (operation.security === undefined) operation.security = [{ apiKey: scopesFor(method, path) }, { session: [] }];
    }
  }
  return document;
}
