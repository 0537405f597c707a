import express, { type Express, type Request, type RequestHandler, type Router } from 'express';
import { errorHandler, notFoundHandler } from '@app/http-errors';
import { jsonBody } from '@app/http-errors/validation';
import type { ServiceDeps } from './declaration.js';
import { requestId } from './request-id.js';
import { securityHeaders } from './security-headers.js';
import { accountPagePath, accountPageRouter, authorizeErrorPage, authorizePageRenderer } from '../account-page/page.js';
import { AccountService, type AdminHooks } from '../identity/accounts.js';
import { authRouter } from '../identity/auth-routes.js';
import { authConfig, type AuthConfig } from '../identity/config.js';
import { cors } from '../identity/cors.js';
import { createKeyUsageRecorder } from '../identity/key-usage.js';
import { keysRouter } from '../identity/keys.js';
import { createLoginThrottle } from '../identity/login-throttle.js';
import {
  authenticate,
  checkTimezoneHeader,
  createCredentialResolver,
  identify,
  requireScope,
  requireScopeForMethod,
} from '../identity/middleware.js';
import { innerCalls } from '../mcp/inner-calls.js';
import { mcpPath, mcpRouter, type McpPrompt } from '../mcp/server.js';
import { toolsFromOpenApi } from '../mcp/tools.js';
import { WEBHOOK_TOOLS, taskTools, type ToolTableEntry } from '../mcp/toolsets.js';
import { OAuthProvider } from '../oauth/provider.js';
import { oauthUrls, publicOrigin } from '../identity/bearer.js';
import { oauthPaths, oauthRouter } from '../oauth/routes.js';
import { forgetUnusedClients } from '../oauth/repository.js';
import { docsPath, docsRouter } from './docs.js';
import { createObservability, mountHealth } from './observability.js';
import { documentedMethods, methodGuard } from './methods.js';
import { createRateLimit, isRead } from './rate-limit.js';
import { under } from './under.js';
import { withRecurringJobs, type RecurringJob } from './recurring.js';
import { getBounded } from '../webhooks/http-post.js';
import { actorOf, runAs } from '../webhooks/actor.js';
import { webhooksRouter } from '../webhooks/routes.js';
import type { WebhookFilter } from '../webhooks/filter.js';
import { createWebhookWorker, type ServiceQueue, type WebhookWorker } from '../webhooks/worker.js';
import { useCursorKeys } from '../streams/cursors.js';
import { createStreamHub, type StreamHub } from '../streams/hub.js';

/**
 * What a service's app is made of: its declaration and the process's dependencies (the runtime
 * reads the envelope, scopes, paths, events and limits from the declaration), and what is the
 * app's own: its OpenAPI document, MCP text and tools, API router, streams and account hooks.
 */
export interface ServiceAppOptions extends ServiceDeps {
  openapiDocument: object;
  /** What every new account gets, also when it signs up (tasks: a personal workspace). */
  accountHooks?: AdminHooks;
  /**
   * The MCP server at `/mcp/<service>`: its tools come from `openapiDocument`; this adds what a
   * model is told (the service's rules, appended to every tool too) and the service's prompts.
   */
  mcp: {
    instructions: string;
    toolNotes: string;
    prompts: McpPrompt[];
    /** The task-level tools of the `default` toolset: which operations each runs (beside the OpenAPI document). */
    tools: ToolTableEntry[];
    /** Property names no tool result may carry (meetings: privateNotes). */
    redact?: string[];
    /** Rewrites each tool result's body (clipboard: what a sensitive or sealed item shows). */
    present?: (body: unknown) => unknown;
  };
  /** What the worker role repeats besides webhook delivery (SERVICE_ROLE worker or all). */
  recurringJobs?: RecurringJob[];
  /**
   * The account page's section of connected services: `connectionsPath` answers GET
   * `{ <service>: { connected, since } }`, `<path>/<service>/start` connects, DELETE `<path>/<service>` disconnects.
   */
  accountPage?: { connectionsPath: string };
  /** The service's own jobs on the worker's queue (scheduled in Postgres: `run_at`, job keys). */
  queue?: ServiceQueue;
  /** The service's filter of webhook events: its subscriptions then take `filter` (see WebhookFilter). */
  webhookFilter?: WebhookFilter;
  /** The app's change streams: built with {@link serviceStreamHub}, closed first on shutdown. */
  streams?: StreamHub;
  /** The API's router, mounted at the declaration's `paths.api`. */
  api: {
    router: Router;
    /**
     * Reads need `read` and writes `write`, checked before the body is parsed. Without it the
     * routes check their own scopes and parse their own bodies (after the check).
     */
    scopeByMethod?: { read: string; write: string; readScopedWrites?: string[] };
    /**
     * Routes under the API path that take no credentials (a calendar feed's secret address:
     * calendar apps send no header). Mounted before authentication; what they do not answer
     * goes on to the authenticated routes.
     */
    open?: Router;
  };
}

/** Which methods a declared rate limit counts. */
const APPLIES = { reads: isRead, writes: (method: string) => !isRead(method) } as const;

/**
 * A service's Express app, in DESIGN.md's order: request id, request log and metrics, security
 * headers, health, the OpenAPI document and its reference page (/docs/<service>); then CORS, a
 * network-level cap by address, the caller, the account page, rate limits, sign-in
 * (`/auth/<service>`); then authentication (401, 403 cross-origin) and scope (403) before any body
 * is parsed (400/413); the routes; a JSON 404; the one error handler. It never listens by itself.
 */
export function createServiceApp(o: ServiceAppOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  // ETags of list bodies cost more than they save; a resource sets its own where If-Match needs it.
  app.set('etag', false);
  app.set('trust proxy', o.config.trustProxy);

  const declared = o.service;
  const service = declared.name;
  const auth = authConfig(declared, o.config.allowedOrigins);
  const envelope = declared.envelope;
  const webhooks = { path: declared.paths.webhooks, catalog: declared.events };
  useCursorKeys(service, o.config.webhooks.secretKeys);
  const observability = createObservability(service, o.logger);
  // API keys may be used from any origin (CORS allows it), so responses may be read cross-origin.
  app.use(
    requestId(),
    observability.middleware,
    securityHeaders({ crossOriginResourcePolicy: { policy: 'cross-origin' } }),
  );
  mountHealth(app, { db: o.db, redis: o.redis, registry: observability.registry });
  const deliverer = () =>
    withRecurringJobs(
      createWebhookWorker({
        service,
        databaseUrl: o.config.databaseUrl,
        catalog: webhooks.catalog,
        ...o.config.webhooks,
        logger: o.logger,
        registry: observability.registry,
        queue: o.queue,
        filter: o.webhookFilter,
      }),
      [...(o.recurringJobs ?? []), forgetUnusedClientsJob(o.db)],
      o.logger,
    );
  if (o.config.serviceRole === 'worker') {
    // A worker process delivers webhooks and serves its probes and metrics, nothing else.
    app.locals[WORKER] = deliverer();
    app.use(notFoundHandler());
    app.use(errorHandler({ style: envelope, logger: o.logger }));
    return app;
  }
  app.get('/openapi.json', (_req, res) => {
    res.json(o.openapiDocument);
  });
  // The service's own pages, OAuth and MCP: each router entered only by its own paths.
  app.use(under([docsPath(service)], docsRouter(service, o.openapiDocument)));

  app.use(cors(o.config.allowedOrigins));
  // Before the cap, authentication and the routers: a method the path does not have is a 405
  // (OPTIONS a 204) with the path's own methods, its pages (reference, account) beside its document.
  const pages = [
    docsPath(service),
    `${docsPath(service)}/{file}`,
    accountPagePath(service),
    `${accountPagePath(service)}/{asset}`,
  ];
  app.use(
    methodGuard({
      ...Object.fromEntries(pages.map((page) => [page, ['get']])),
      ...documentedMethods(o.openapiDocument),
    }),
  );
  // The declared network-level cap (meetings): per client address on the API path, whoever the
  // caller is, before authentication. Counted here (in Redis) rather than in the gateway, so it
  // holds across every instance and gateway replica; the trusted proxy (TRUST_PROXY) names the client.
  if (o.config.networkCap !== undefined) {
    app.use(
      declared.paths.api,
      createRateLimit({
        name: 'network',
        limit: o.config.networkCap,
        by: 'address',
        windowMs: 60_000,
        redis: o.redis,
        prefix: o.config.redisPrefix,
      }),
    );
  }
  const credentials = createCredentialResolver(o.db, auth, createKeyUsageRecorder(o.db, o.logger));
  const ownResource = (req: Request) => oauthUrls(service, publicOrigin(req, o.config.publicUrl)).resource;
  // An MCP request is counted as a read (what a tool call changes is counted as the REST request
  // it makes), by the limits that count reads.
  const mcp = mcpPath(service);
  const isMcp = (req: Request) => req.path.toLowerCase().replace(/\/$/, '') === mcp;
  const rateLimits = declared.limits.rateLimits.map(({ name, applies }) => ({
    name,
    limit: o.config.rateLimits[name]!,
    applies: applies && APPLIES[applies],
  }));
  const calls = innerCalls(rateLimits.filter((l) => l.applies?.('GET') ?? true).map((l) => l.name));
  // A tool call's REST request is checked against the resource its MCP request was authenticated for.
  app.use(
    identify(auth, credentials, {
      ownResource: (req) => calls.resourceOf(req) ?? ownResource(req),
      cookieSecure: o.config.cookieSecure,
    }),
  );
  // The caller is the actor of every event its request records (its async context carries it).
  app.use((req, _res, next) => (req.caller ? runAs(actorOf(req.caller), next) : next()));
  app.use(
    under(
      [accountPagePath(service)],
      accountPageRouter(auth, declared.paths.keys, o.config.signup, o.accountPage?.connectionsPath),
    ),
  );
  // Every request, an MCP one included, counts once; a tool call's first REST request counted by
  // a limit is its MCP request, already counted there.
  for (const { applies = () => true, ...limit } of rateLimits) {
    app.use(
      createRateLimit({
        ...limit,
        skip: (req) => !applies(isMcp(req) ? 'GET' : req.method),
        prepaid: (req) => calls.prepaid(req, limit.name),
        windowMs: 60_000,
        redis: o.redis,
        prefix: o.config.redisPrefix,
      }),
    );
  }
  app.use(under([mcp], mcpRouterOf(o, auth, calls)));
  const json = jsonBody({ limit: o.config.bodyLimitBytes });
  app.use(under(Object.values(oauthPaths(service)), oauthRouterOf(o, auth, credentials, ownResource)));
  const accounts = new AccountService(
    o.db,
    auth,
    createLoginThrottle(o.redis, o.config.redisPrefix, o.logger),
    o.accountHooks ?? {},
  );
  app.use(
    `/auth/${service}`,
    authRouter({ cfg: auth, accounts, signup: o.config.signup, json, cookieSecure: o.config.cookieSecure }),
  );
  app.use(declared.paths.keys, authenticate(auth), json, keysRouter(o.db, auth));
  const scope = o.api.scopeByMethod;
  const timezone = checkTimezoneHeader();
  // Before the API's own routes: their scope check (tasks:read, ...) does not apply here.
  app.use(
    webhooks.path,
    authenticate(auth),
    requireScope('webhooks'),
    timezone,
    json,
    webhooksRouter({
      db: o.db,
      service,
      catalog: webhooks.catalog,
      allowPrivate: o.config.webhooks.allowPrivate,
      secretKeys: o.config.webhooks.secretKeys,
      filter: o.webhookFilter,
    }),
  );
  // An API process (SERVICE_ROLE=api) writes events and leaves their delivery to the workers.
  if (o.config.serviceRole === 'all') app.locals[WORKER] = deliverer();
  if (o.streams) app.locals[STREAMS] = o.streams;
  if (o.api.open) app.use(declared.paths.api, o.api.open);
  if (scope) app.use(declared.paths.api, authenticate(auth), scopeOf(scope), timezone, json, o.api.router);
  else app.use(declared.paths.api, authenticate(auth), timezone, o.api.router);

  app.use(notFoundHandler());
  app.use(errorHandler({ style: envelope, logger: o.logger }));
  return app;
}

/**
 * Reads need `read` and writes `write`, except the writes to `readScopedWrites` (paths under the
 * API path): they change no record, only the caller's own settings a reader may hold (the address
 * of a calendar feed), so `read` is enough.
 */
function scopeOf(scope: { read: string; write: string; readScopedWrites?: string[] }): RequestHandler {
  const byMethod = requireScopeForMethod(scope.read, scope.write);
  const reads = requireScope(scope.read);
  const lighter = new Set(scope.readScopedWrites ?? []);
  return (req, res, next) => (lighter.has(req.path) ? reads : byMethod)(req, res, next);
}

/** The MCP server of the service: a tool per documented operation, its task-level tools and prompts. */
function mcpRouterOf(o: ServiceAppOptions, auth: AuthConfig, calls: ReturnType<typeof innerCalls>): Router {
  const operations = toolsFromOpenApi(o.openapiDocument, {
    excludePaths: [o.service.paths.keys],
    notes: o.mcp.toolNotes,
  });
  return mcpRouter({
    auth,
    tools: operations,
    taskTools: taskTools([...o.mcp.tools, ...WEBHOOK_TOOLS], operations),
    prompts: o.mcp.prompts,
    // The per-operation tools repeat the notes in each description; the task-level tools rely on these.
    instructions: `${o.mcp.instructions}\n\n${o.mcp.toolNotes}`,
    envelope: o.service.envelope,
    bodyLimitBytes: o.config.bodyLimitBytes,
    publicUrl: o.config.publicUrl,
    allowedOrigins: [...o.config.allowedOrigins, ...(o.config.publicUrl ? [o.config.publicUrl] : [])],
    redact: o.mcp.redact,
    present: o.mcp.present,
    redis: o.redis,
    redisPrefix: o.config.redisPrefix,
    logger: o.logger,
    sessionSecret: o.config.mcpSessionSecret,
    confirmationSeconds: o.config.mcpConfirmationSeconds,
    calls,
  });
}

/** The OAuth authorization server (metadata, registration, authorize, token, revocation). */
function oauthRouterOf(
  o: ServiceAppOptions,
  auth: AuthConfig,
  credentials: ReturnType<typeof createCredentialResolver>,
  resourceOf: (req: Request) => string,
): Router {
  const { cimdAllowPrivate: anyPrivate, cimdTrusted } = o.config.oauth;
  const cimdAllowPrivate = (url: string) => anyPrivate || cimdTrusted.includes(url);
  const provider = new OAuthProvider({
    db: o.db,
    cfg: auth,
    credentials,
    resourceOf,
    render: authorizePageRenderer(auth, o.service.paths.keys, o.config.signup),
    // Their own switch, not the webhooks': npm start allows local webhook receivers, and of local
    // client documents only meetings' (OAUTH_CIMD_TRUSTED), which tasks fetches when it is connected.
    clientDocuments: {
      allowPrivate: cimdAllowPrivate,
      get: (url, maxBytes, timeoutMs) =>
        getBounded(url, { accept: 'application/json' }, maxBytes, timeoutMs, { allowPrivate: cimdAllowPrivate(url) }),
      log: (reason) => o.logger.debug({ reason }, 'client metadata document refused'),
    },
  });
  const registrationLimit = createRateLimit({
    name: 'oauth-register',
    limit: o.config.oauth.registrationsPerHour,
    windowMs: 3_600_000,
    by: 'address',
    applies: (method) => method === 'POST',
    redis: o.redis,
    prefix: o.config.redisPrefix,
  });
  return oauthRouter({
    cfg: auth,
    db: o.db,
    provider,
    publicUrl: o.config.publicUrl,
    errorPage: authorizeErrorPage(auth),
    registrationLimit,
  });
}

/** How often a worker forgets OAuth clients that never got a grant (each run deletes a bounded batch). */
const UNUSED_CLIENTS_EVERY_MS = 10 * 60_000;

/** Registered clients that never got a grant within a day are deleted by every worker process (idempotent, so replicas may overlap). */
const forgetUnusedClientsJob = (db: ServiceDeps['db']): RecurringJob => ({
  name: 'oauth-unused-clients',
  everyMs: UNUSED_CLIENTS_EVERY_MS,
  run: () => forgetUnusedClients(db),
});

const WORKER = 'webhookWorker';

/**
 * The app's webhook delivery worker, if it has webhooks: the process starts it once it listens
 * and stops it before closing its pools (the app itself never starts anything).
 */
export function webhookWorkerOf(app: Express): WebhookWorker | undefined {
  return app.locals[WORKER] as WebhookWorker | undefined;
}

const STREAMS = 'streamHub';

/** The change-stream hub of a service app, from its dependencies (see @app/auth/streams). */
export function serviceStreamHub(deps: ServiceDeps): StreamHub {
  return createStreamHub({
    service: deps.service.name,
    databaseUrl: deps.config.databaseUrl,
    db: deps.db,
    redis: deps.redis,
    redisPrefix: deps.config.redisPrefix,
    logger: deps.logger,
    ...deps.config.streams,
    // The other half stays for the requests, whatever the streams are waiting for.
    maxReads: Math.max(1, Math.floor(deps.config.databasePoolSize / 2)),
  });
}

/** The app's change streams, if it has any: the process ends them (with `retry:`) before draining. */
export function streamHubOf(app: Express): StreamHub | undefined {
  return app.locals[STREAMS] as StreamHub | undefined;
}
