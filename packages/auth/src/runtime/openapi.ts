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
  { url: '/', description: 'The origin that served this document: the gateway (http://localhost:8080 under npm start and docker compose) or the service on its own port' },
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

/**
 * Names, on every operation that inherits the document's `apiKey` requirement, the scopes a key
 * needs for it (`[{ apiKey: [scopes] }, { session: [] }]`). The MCP tools are made from these, so
 * an operation is listed to a token exactly when the token may call it. Operations that state
 * their own security (public, session-only, or already scoped) are left as they are.
 */
export function withApiKeyScopes<T extends object>(document: T, scopesFor: (method: string, path: string) => string[]): T {
  const paths = (document as { paths?: Record<string, Record<string, { security?: unknown } | unknown>> }).paths ?? {};
  for (const [path, item] of Object.entries(paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (!['get', 'put', 'post', 'patch', 'delete'].includes(method) || !op || typeof op !== 'object') continue;
      const operation = op as { security?: unknown };
      if (operation.security === undefined) operation.security = [{ apiKey: scopesFor(method, path) }, { session: [] }];
    }
  }
  return document;
}
