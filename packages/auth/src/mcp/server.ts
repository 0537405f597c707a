/*
 * The builder: a service's MCP router, assembled once from its tools and options (the shared
 * context every request reads), and the entry of each POST, which checks the connection's
 * toolsets and routes the message by protocol revision: 2026-07-28 to the SDK's per-request
 * handler, 2025-11-25 and 2025-06-18 to the legacy transport (legacy.ts).
 */
import { hkdfSync } from 'node:crypto';
import { getRequestListener } from '@hono/node-server';
import { Router, type Request, type RequestHandler, type Response } from 'express';
import {
  createMcpHandler,
  createRequestStateCodec,
  isLegacyRequest,
  ProtocolErrorCode,
} from '@modelcontextprotocol/server';
import { jsonBody } from '@app/http-errors/validation';
import { oauthUrls, publicOrigin } from '../identity/bearer.js';
import { answerRelay } from './elicitation.js';
import { sessionIds } from './sessions.js';
import type { GeneratedTool } from './tools.js';
import {
  ALL,
  STATE_GRACE_SECONDS,
  type ConfirmationState,
  type Exchange,
  type McpContext,
  type McpOptions,
  type Selection,
} from './context.js';
import { usedConfirmations } from './confirmations.js';
import { bearer, settle } from './challenge.js';
import { mcpServer } from './dispatch.js';
import { legacyExchange } from './legacy.js';

export type { McpPrompt } from './context.js';

/** The Streamable HTTP transport's code for a request refused before any message is read. */
const CONNECTION_CLOSED = -32000;

/** The toolsets a connection asked for (`?toolsets=` or X-MCP-Toolsets; none: `default`) and whether it is read-only. */
function selection(req: Request, known: ReadonlySet<string>): Selection | { problem: string } {
  const query = typeof req.query.toolsets === 'string' ? req.query.toolsets : undefined;
  const header = req.get('x-mcp-toolsets');
  const named = (query ?? header ?? 'default')
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);
  const unknown = named.filter((t) => !known.has(t));
  if (unknown.length > 0 || named.length === 0)
    return {
      problem: `toolsets: unknown toolset ${unknown.join(', ') || '(none)'}; this server has ${[...known].join(', ')}`,
    };
  const flag = typeof req.query.readonly === 'string' ? req.query.readonly : req.get('x-mcp-readonly');
  if (flag !== undefined && !['1', 'true', '0', 'false'].includes(flag)) return { problem: 'readonly must be 1 or 0' };
  return { toolsets: new Set(named), readOnly: flag === '1' || flag === 'true' };
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * The Streamable HTTP transport's DNS-rebinding rule: a request whose `Origin` is present and not
 * allowed is 403. Allowed: the configured origins, and pages on the user's own machine (a loopback
 * origin, such as the MCP Inspector's): a rebinding page's origin is always the attacker's own name.
 * No `Origin` (assistants, scripts, servers) is not a browser page and is served.
 */
function rebindingGuard(allowed: readonly string[]): RequestHandler {
  const origins = new Set(allowed);
  const isLoopback = (origin: string) => {
    try {
      const url = new URL(origin);
      return (
        (url.protocol === 'http:' || url.protocol === 'https:') &&
        LOOPBACK_HOSTS.has(url.hostname) &&
        url.origin === origin
      );
    } catch {
      return false;
    }
  };
  return (req, res, next) => {
    const origin = req.get('origin');
    if (origin === undefined || origins.has(origin) || isLoopback(origin)) return next();
    res.status(403).json({
      jsonrpc: '2.0',
      error: { code: CONNECTION_CLOSED, message: `Origin ${origin.slice(0, 200)} may not call this MCP server` },
      id: null,
    });
  };
}

const rpcError = (res: Response, status: number, code: number, message: string) => {
  res.status(status).json({ jsonrpc: '2.0', error: { code, message }, id: null });
};

/** Where {@link mcpRouter} serves the service's MCP server: `/mcp/<service>`. */
export const mcpPath = (service: string): string => `/mcp/${service}`;

/** What every request of the service's MCP server reads, made once from its options and tools. */
function mcpContext(o: McpOptions): McpContext {
  // A destructive operation takes `confirm` (the user agreed), which a client that cannot be asked must send.
  const withConfirm = (schema: GeneratedTool['inputSchema']) => ({
    ...schema,
    properties: {
      ...schema.properties,
      confirm: {
        type: 'boolean',
        description:
          'true once the user agreed: it cannot be undone (a client that answers elicitation is asked instead)',
      },
    },
  });
  const listed = ({ name, title, description, inputSchema, annotations }: GeneratedTool) => ({
    name,
    title,
    description,
    inputSchema: annotations.destructiveHint ? withConfirm(inputSchema) : inputSchema,
    annotations,
  });
  const modernServers: McpContext['modernServers'] = new WeakMap();
  return {
    o,
    byName: new Map(o.tools.map((tool) => [tool.name, { tool, listed: listed(tool) }])),
    readerOf: new Map(o.tools.filter((t) => t.route.method === 'GET').map((t) => [t.route.path, t])),
    redact: new Set(o.redact ?? []),
    stateCodec: createRequestStateCodec<ConfirmationState>({
      key: Buffer.from(
        hkdfSync('sha256', o.sessionSecret, `mcp-request-state:${o.auth.service}`, 'mcp request state', 32),
      ),
      ttlSeconds: o.confirmationSeconds + STATE_GRACE_SECONDS,
    }),
    stateSeconds: o.confirmationSeconds + STATE_GRACE_SECONDS,
    used: usedConfirmations({ redis: o.redis, prefix: o.redisPrefix, logger: o.logger }),
    relay: answerRelay({ redis: o.redis, prefix: o.redisPrefix, logger: o.logger }),
    ids: sessionIds(o.sessionSecret, o.auth.service),
    toolsets: new Set([ALL, ...o.taskTools.map((t) => t.toolset)]),
    // 2026-07-28: the SDK's per-request entry, made once; the server it builds for a request is the
    // one that request's handler put in modernServers (keyed by the web request it hands the entry).
    modern: createMcpHandler(({ requestInfo }) => modernServers.get(requestInfo!)!(), {
      legacy: 'reject',
      maxRequestBodySize: o.bodyLimitBytes,
    }),
    modernServers,
  };
}

/**
 * {@link mcpPath}: the service as an MCP server over Streamable HTTP, stateless (a new server and
 * transport per request, no session id), so any replica answers any request. Bearer API keys and
 * OAuth access tokens only; without one, 401 with the RFC 9728 `resource_metadata` challenge.
 * Each tool call is sent to this same process as the REST request it stands for (same routes,
 * validation, scopes, rate limits and request log), so the tool and the REST call cannot disagree.
 */
export function mcpRouter(o: McpOptions): Router {
  const path = mcpPath(o.auth.service);
  const c = mcpContext(o);
  const router = Router();
  router.all(path, rebindingGuard(o.allowedOrigins), bearer(o));
  // No standalone stream (GET) and no session to end (DELETE): a session is only a signed note of
  // the client's capabilities, so there is nothing to close (the SDK client takes 405 as that).
  router.all(path, (req, res, next) => {
    if (req.method === 'POST') return next();
    res
      .status(405)
      .set('Allow', 'POST')
      .json({
        jsonrpc: '2.0',
        error: {
          code: CONNECTION_CLOSED,
          message: 'This MCP server has no stream to open and no session to end: send each JSON-RPC message with POST',
        },
        id: null,
      });
  });
  router.post(path, jsonBody({ limit: o.bodyLimitBytes }), (req, res) => serve(c, req, res));
  return router;
}

/** One JSON-RPC message, routed by its revision: 2026-07-28 to the SDK's per-request handler, older ones to the legacy transport. */
async function serve(c: McpContext, req: Request, res: Response): Promise<void> {
  const { o } = c;
  // One message per request: a batch would run any number of requests for one HTTP request and one count against the rate limit.
  if (Array.isArray(req.body))
    return rpcError(
      res,
      400,
      ProtocolErrorCode.InvalidRequest,
      'A JSON-RPC batch (an array) is not accepted (no MCP revision since 2025-06-18 has them): send each message in its own request',
    );
  const chosen = selection(req, c.toolsets);
  if ('problem' in chosen) return rpcError(res, 400, ProtocolErrorCode.InvalidRequest, chosen.problem);
  // The resource this request was authenticated for (identify checked the token's against it).
  const calls = o.calls.open(oauthUrls(o.auth.service, publicOrigin(req, o.publicUrl)).resource);
  const x: Exchange = {
    req,
    res,
    ticket: calls.ticket,
    scopes: req.auth!.scopes,
    chosen,
    callerGone: false,
    closing: [],
  };
  res.on('close', () => {
    calls.close();
    for (const close of x.closing) close();
  });
  const listener = getRequestListener(
    async (request) => {
      // 2026-07-28 (the version in the request's _meta): served by the SDK's per-request handler, no session.
      if (!(await isLegacyRequest(request, req.body))) {
        c.modernServers.set(request, () => mcpServer(c, x, undefined));
        return settle(o, x, await c.modern.fetch(request, { authInfo: req.auth, parsedBody: req.body }));
      }
      const legacy = await legacyExchange(c, x, request);
      return legacy instanceof globalThis.Response ? legacy : settle(o, x, legacy.response);
    },
    { overrideGlobalObjects: false },
  );
  await listener(req, res);
}
