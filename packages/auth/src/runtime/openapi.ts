/*
 * The parts of the three OpenAPI documents that createServiceApp decides, so each document says
 * them the same way: where the API is called (the gateway), how a caller authenticates, and the
 * headers the shared middleware adds. Each app spreads these into its own document.
 */

/**
 * The server is the gateway, which publishes the document as `/openapi/<svc>.json`: "/" is that
 * origin. The document lists only what the gateway routes; `/healthz`, `/readyz`, `/metrics` and
 * `/openapi.json` are answered on each service's own port only (DESIGN.md "Observability") and
 * are described in the document's `info`, not as paths. (A localhost entry would be flagged by
 * the lint's no-server-example.com rule, and "/" already reaches the local gateway from its pages.)
 */
export const openapiServers = [
  // x-internal: false says the audience (OWASP API9): the API is public, for key holders and browsers.
  {
    url: '/',
    description:
      'The gateway that served this document as /openapi/<service>.json (http://localhost:8080 under npm start and docker compose)',
    'x-internal': false,
  },
];

/**
 * A sentence for each document's `info.description`: the operational routes that are on the
 * service's own port only, so no tool takes them for gateway routes.
 */
export const servicePortRoutes =
  "On each service's own port only (not routed by the gateway, so not listed here): `GET /healthz` (process up), `GET /readyz` (Postgres and Redis reachable; 503 when not), " +
  '`GET /metrics` (Prometheus text) and `GET /openapi.json` (this document, which the gateway publishes as `/openapi/<service>.json`).';

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
      description:
        'A browser session (it holds every scope). A session request whose Origin is not in ALLOWED_ORIGINS is 403.',
    },
  };
}

/** The session-only key routes every service mounts (keysRouter). */
export const apiKeysTag = {
  name: 'API keys',
  description: "The account's API keys, managed with a browser session only",
};

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];
const ref = (name: string) => ({ $ref: `#/components/headers/${name}` });
const count = (description: string) => ({
  description,
  schema: { type: 'integer', format: 'int32', minimum: 0, maximum: 1_000_000 },
});

/** The headers createServiceApp's rate limits (express-rate-limit, draft-6 names) and CORS add. */
const commonHeaders = {
  'RateLimit-Limit': count(
    'Requests allowed in the current window (per account, or per client address before authentication).',
  ),
  'RateLimit-Remaining': count('Requests left in the current window.'),
  'RateLimit-Reset': count('Seconds until the current window ends.'),
  'Retry-After': {
    description: 'Seconds to wait before retrying.',
    schema: { type: 'integer', format: 'int32', minimum: 1, maximum: 86_400 },
  },
  'RateLimit-Policy': {
    description: 'The limit and its window, e.g. `600;w=60`.',
    schema: { type: 'string', maxLength: 100 },
  },
  'Access-Control-Allow-Origin': {
    description:
      'Sent when the request has an `Origin`: that origin when it is in ALLOWED_ORIGINS (with credentials), else `*` (API keys work from any origin).',
    schema: { type: 'string', maxLength: 2048 },
  },
};
const RATE_LIMIT_HEADERS = ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'RateLimit-Policy'] as const;

type Doc = {
  paths: Record<string, Record<string, { responses?: Record<string, ResponseLike> }>>;
  components: { headers?: Record<string, unknown>; responses?: Record<string, ResponseLike> };
};
type ResponseLike = { $ref?: string; headers?: Record<string, unknown> };

/**
 * Documents, on every answer of every API operation, the headers the shared middleware adds: the
 * rate limits' `RateLimit-*` (2xx and 4xx: the answers a limited request can get; 429 with
 * `Retry-After`) and CORS's
 * `Access-Control-Allow-Origin` (all). One place, so no operation can leave them out.
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
  for (const item of Object.values(d.paths)) {
    for (const method of METHODS) {
      for (const [status, response] of Object.entries(item[method]?.responses ?? {})) {
        const r = target(response);
        if (done.has(r)) continue;
        done.add(r);
        const names = [
          ...(/^[24]/.test(status) ? RATE_LIMIT_HEADERS : []),
          ...(status === '429' ? ['Retry-After' as const] : []),
          'Access-Control-Allow-Origin' as const,
        ].filter((n) => r.headers?.[n] === undefined);
        for (const n of names) used.add(n);
        r.headers = { ...Object.fromEntries(names.map((n) => [n, ref(n)])), ...r.headers };
      }
    }
  }
  // Only the headers some answer refers to (an unused component is a lint warning).
  d.components.headers = {
    ...Object.fromEntries([...used].map((n) => [n, commonHeaders[n]])),
    ...d.components.headers,
  };
  return doc;
}

/**
 * Names, on every operation that inherits the document's `apiKey` requirement, the scopes a key
 * needs for it (`[{ apiKey: [scopes] }, { session: [] }]`). The MCP tools are made from these, so
 * an operation is listed to a token exactly when the token may call it. Operations that state
 * their own security (public, session-only, or already scoped) are left as they are.
 */
export function withApiKeyScopes<T extends object>(
  document: T,
  scopesFor: (method: string, path: string) => string[],
): T {
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

/** The longest request line the gateway takes (nginx's default `large_client_header_buffers 4 8k`); longer is 414. */
const GATEWAY_MAX_REQUEST_LINE = 8192;

type Param = {
  in?: string;
  name?: string;
  schema?: { type?: string | string[]; maxLength?: number; pattern?: string; enum?: unknown[]; format?: string };
};

/**
 * The most bytes one parameter can add to the request line: a string of `maxLength` code points
 * that must be percent-encoded as 4-byte UTF-8 (12 characters each), or 3 per character when a
 * pattern keeps it to ASCII; an enum its longest value; a number 24.
 */
function worstCaseBytes(p: Param): number {
  const s = p.schema ?? {};
  if (Array.isArray(s.enum)) return Math.max(...s.enum.map((v) => String(v).length * 3));
  const types = Array.isArray(s.type) ? s.type : [s.type];
  if (!types.includes('string')) return 24;
  if (s.maxLength === undefined) return Number.POSITIVE_INFINITY;
  return s.maxLength * (s.pattern === undefined ? 12 : 3);
}

/**
 * Documents the gateway's 414 (URI too long) on every operation whose longest valid request line
 * (path and query parameters at their bounds, percent-encoded) can exceed
 * {@link GATEWAY_MAX_REQUEST_LINE}: the gateway answers it before the service sees the request, in
 * its own envelope. Mutates and returns `doc`.
 */
export function documentUriLimit<D extends object>(doc: D): D {
  const paths = (
    doc as unknown as {
      paths: Record<string, Record<string, { parameters?: Param[]; responses?: Record<string, unknown> }>>;
    }
  ).paths;
  const response = {
    description: `The request line is longer than the gateway takes (${GATEWAY_MAX_REQUEST_LINE} bytes, percent-encoding included): \`uri_too_long\`, answered by the gateway in its envelope. Shorten the query (long search text, a long cursor).`,
    content: {
      'application/json': {
        schema: {
          type: 'object',
          required: ['error'],
          properties: {
            error: {
              type: 'object',
              required: ['code', 'message', 'requestId'],
              properties: {
                code: { const: 'uri_too_long' },
                message: { type: 'string' },
                requestId: { type: 'string' },
              },
            },
          },
        },
      },
    },
  };
  for (const [path, item] of Object.entries(paths)) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op?.responses) continue;
      const params = (op.parameters ?? []).filter((p) => p.in === 'path' || p.in === 'query');
      const bytes =
        method.length +
        path.length +
        ' HTTP/1.1\r\n '.length +
        params.reduce((sum, p) => sum + (p.name?.length ?? 0) + 2 + worstCaseBytes(p), 0);
      if (bytes > GATEWAY_MAX_REQUEST_LINE && !op.responses['414']) op.responses['414'] = response;
    }
  }
  return doc;
}
