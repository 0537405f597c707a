import express, { Router, type ErrorRequestHandler, type RequestHandler, type Response } from 'express';
import {
  InvalidClientMetadataError,
  TemporarilyUnavailableError,
  TooManyRequestsError,
} from '@modelcontextprotocol/sdk/server/auth/errors.js';
import { authorizationHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/authorize.js';
import { metadataHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/metadata.js';
import { clientRegistrationHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/register.js';
import { revocationHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/revoke.js';
import { tokenHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/token.js';
import { AppError, RETRY_AFTER_UNAVAILABLE_SECONDS, errors, isDependencyOutage, isUuid } from '@app/http-errors';
import type { AuthConfig } from '../identity/config.js';
import { authenticate, requireAllowedOrigin, requireSession } from '../identity/middleware.js';
import type { OAuthProvider } from './provider.js';
import { listGrants } from './repository.js';
import type { AnyDb } from '../identity/repository.js';
import { oauthUrls, publicOrigin } from '../identity/bearer.js';

/**
 * A provider call that fails because Postgres is down becomes OAuth's `temporarily_unavailable`
 * (an authorize redirect carries it, RFC 6749 4.1.2.1), and {@link outagesAs503} answers it
 * directly as a 503 with Retry-After, not the SDK's generic 500.
 */
function guardOutages(provider: OAuthProvider): void {
  const wrap =
    <A extends unknown[], R>(fn: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      try {
        return await fn(...args);
      } catch (err) {
        if (isDependencyOutage(err))
          throw new TemporarilyUnavailableError('The service is temporarily unavailable; retry shortly');
        throw err;
      }
    };
  const p = provider as unknown as Record<string, unknown>;
  for (const name of [
    'authorize',
    'challengeForAuthorizationCode',
    'exchangeAuthorizationCode',
    'exchangeRefreshToken',
    'revokeToken',
  ] as const) {
    p[name] = wrap((provider[name] as (...a: unknown[]) => Promise<unknown>).bind(provider));
  }
  const store = provider.clientsStore as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>;
  store.getClient = wrap(store.getClient!.bind(store));
  store.registerClient = wrap(store.registerClient!.bind(store));
}

/**
 * The SDK's authorize handler redirects its errors (an unknown scope or resource, a malformed
 * parameter) to the client's redirect URI, and answers others (an unknown client or redirect URI)
 * as JSON. Before the signed-in user has answered the consent page every one of them is shown as
 * a page instead and redirects nowhere (RFC 9700 4.11.2): 400, or 503 with Retry-After when
 * Postgres is down. The consent page itself is rendered by the provider, never redirected.
 */
function authorizeErrorsAsPage(show: (res: Response, error: string, description: string) => void): RequestHandler {
  return (_req, res, next) => {
    const page = (error: string, description: string) => {
      if (error === 'temporarily_unavailable')
        res.status(503).set('Retry-After', String(RETRY_AFTER_UNAVAILABLE_SECONDS));
      else res.status(400);
      show(res, error, description);
      return res;
    };
    res.redirect = (...args: unknown[]) => {
      const target = new URL(String(args[args.length - 1]));
      page(
        target.searchParams.get('error') ?? 'invalid_request',
        target.searchParams.get('error_description') ?? 'The authorization request is invalid',
      );
    };
    const json = res.json.bind(res);
    res.json = (body: unknown) => {
      const err = body as { error?: unknown; error_description?: unknown } | null;
      if (res.statusCode < 400 || typeof err?.error !== 'string') return json(body);
      return page(
        err.error,
        typeof err.error_description === 'string' ? err.error_description : 'The authorization request is invalid',
      );
    };
    next();
  };
}

const outagesAs503: RequestHandler = (_req, res, next) => {
  const json = res.json.bind(res);
  res.json = (body: unknown) => {
    if ((body as { error?: unknown } | null)?.error === 'temporarily_unavailable')
      res.status(503).set('Retry-After', String(RETRY_AFTER_UNAVAILABLE_SECONDS));
    return json(body);
  };
  next();
};

/** A registration's metadata (its JSON body) larger than this is refused, before it is read whole. */
const REGISTRATION_MAX_BYTES = 8 * 1024;

/**
 * Registration's own refusals in RFC 7591's error shape, which is what a registering client
 * reads: metadata over {@link REGISTRATION_MAX_BYTES} (413 `invalid_client_metadata`) and the
 * per-address limit (429 `too_many_requests` with Retry-After). Anything else goes on.
 */
const registrationErrors: ErrorRequestHandler = (err: unknown, _req, res, next) => {
  if ((err as { type?: unknown } | null)?.type === 'entity.too.large') {
    res
      .status(413)
      .json(
        new InvalidClientMetadataError(
          `client metadata may be at most ${REGISTRATION_MAX_BYTES / 1024} KB of JSON`,
        ).toResponseObject(),
      );
    return;
  }
  if (err instanceof AppError && err.status === 429) {
    res
      .status(429)
      .set(err.headers ?? {})
      .json(
        new TooManyRequestsError(
          'Too many client registrations from this address; retry after Retry-After seconds',
        ).toResponseObject(),
      );
    return;
  }
  next(err);
};

export interface OAuthRouterOptions {
  cfg: AuthConfig;
  db: AnyDb;
  provider: OAuthProvider;
  publicUrl?: string;
  /** Counts registrations per client address (across replicas); answers 429 past its limit. */
  registrationLimit: RequestHandler;
  /** Renders an authorize error for the person at the browser (see {@link authorizeErrorsAsPage}). */
  errorPage: (res: Response, error: string, description: string) => void;
}

/**
 * OAuth 2.1 for MCP connectors, on the SDK's handlers: RFC 9728 protected-resource metadata for
 * `/mcp/<service>`, RFC 8414 metadata for the issuer `<origin>/oauth/<service>`, and under that
 * issuer `authorize` (code + PKCE S256; a client identifies itself by the URL of its Client ID
 * Metadata Document, or by an id from `register`, RFC 7591 dynamic registration, deprecated),
 * `token`, `revoke` (RFC 7009) and `consent` (the consent page's Allow/Deny form, whose redirect
 * carries `iss`, RFC 9207: every other authorize answer is a page). The account page's
 * "Connected apps" are `GET /auth/<service>/apps` and `DELETE /auth/<service>/apps/{id}`
 * (sessions only). The SDK's
 * in-memory rate limits are off: the service's own limits (in Redis, across replicas) apply.
 */
/** The paths {@link oauthRouter} serves, each with everything below it. */
export const oauthPaths = (svc: string) => ({
  resourceMetadata: `/.well-known/oauth-protected-resource/mcp/${svc}`,
  issuerMetadata: `/.well-known/oauth-authorization-server/oauth/${svc}`,
  issuer: `/oauth/${svc}`,
  apps: `/auth/${svc}/apps`,
});

export function oauthRouter(o: OAuthRouterOptions): Router {
  const svc = o.cfg.service;
  const paths = oauthPaths(svc);
  const scopes = [...o.cfg.scopes];
  guardOutages(o.provider);
  const router = Router();

  router.use(paths.resourceMetadata, (req, res, next) => {
    const urls = oauthUrls(svc, publicOrigin(req, o.publicUrl));
    metadataHandler({
      resource: urls.resource,
      authorization_servers: [urls.issuer],
      scopes_supported: scopes,
      bearer_methods_supported: ['header'],
      resource_name: `${svc.charAt(0).toUpperCase()}${svc.slice(1)} MCP server`,
    })(req, res, next);
  });
  router.use(paths.issuerMetadata, (req, res, next) => {
    const { issuer } = oauthUrls(svc, publicOrigin(req, o.publicUrl));
    metadataHandler({
      issuer,
      authorization_endpoint: `${issuer}/authorize`,
      token_endpoint: `${issuer}/token`,
      registration_endpoint: `${issuer}/register`,
      revocation_endpoint: `${issuer}/revoke`,
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['none'],
      revocation_endpoint_auth_methods_supported: ['none'],
      scopes_supported: scopes,
      client_id_metadata_document_supported: true,
      authorization_response_iss_parameter_supported: true,
    })(req, res, next);
  });

  const base = paths.issuer;
  const session: RequestHandler[] = [authenticate(o.cfg), requireSession()];
  router.post(
    `${base}/consent`,
    requireAllowedOrigin(o.cfg),
    ...session,
    express.urlencoded({ extended: false, limit: '4kb' }),
    async (req, res) => {
      const { request, decision } = (req.body ?? {}) as { request?: unknown; decision?: unknown };
      if (
        typeof request !== 'string' ||
        !/^[0-9a-f-]{36}$/i.test(request) ||
        (decision !== 'allow' && decision !== 'deny')
      ) {
        throw errors.validation([
          { path: '/decision', message: 'the consent form sends request and decision (allow or deny)' },
        ]);
      }
      const { issuer } = oauthUrls(svc, publicOrigin(req, o.publicUrl));
      const target = await o.provider.decide(req.caller!.accountId, request, decision === 'allow', issuer);
      if (!target) throw errors.notFound('This authorization request is unknown or expired; start again from the app');
      res.set('Cache-Control', 'no-store').redirect(302, target);
    },
  );
  router.use(`${base}`, outagesAs503);
  router.use(
    `${base}/authorize`,
    authorizeErrorsAsPage(o.errorPage),
    authorizationHandler({ provider: o.provider, rateLimit: false }),
  );
  router.use(`${base}/token`, tokenHandler({ provider: o.provider, rateLimit: false }));
  // Counted, then read (at most 8 KB) before the SDK's handler, whose own parser then has nothing to do.
  router.use(
    `${base}/register`,
    o.registrationLimit,
    express.json({ limit: REGISTRATION_MAX_BYTES }),
    registrationErrors,
    clientRegistrationHandler({
      clientsStore: o.provider.clientsStore,
      rateLimit: false,
      clientSecretExpirySeconds: 0,
    }),
  );
  router.use(`${base}/revoke`, revocationHandler({ provider: o.provider, rateLimit: false }));

  router.get(paths.apps, ...session, async (req, res) => {
    res.json({ items: await listGrants(o.db, req.caller!.accountId) });
  });
  router.delete(`${paths.apps}/:id`, ...session, async (req, res) => {
    const id = String(req.params.id);
    if (!isUuid(id) || !(await o.provider.endGrant(id, req.caller!.accountId))) {
      throw errors.notFound('No such connected app');
    }
    res.json({ id, disconnected: true });
  });
  return router;
}
