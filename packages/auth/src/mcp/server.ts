import { createHash, hkdfSync, randomUUID } from 'node:crypto';
import { Agent, request as httpRequest } from 'node:http';
import { getRequestListener } from '@hono/node-server';
import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response';
import { Router, type Request, type RequestHandler, type Response } from 'express';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { requireBearerAuth } from '@modelcontextprotocol/express';
import {
  createMcpHandler,
  createRequestStateCodec,
  inputRequired,
  inputResponse,
  isJSONRPCErrorResponse,
  isJSONRPCResultResponse,
  isLegacyRequest,
  OAuthError,
  OAuthErrorCode,
  ProtocolError,
  ProtocolErrorCode,
  Server,
  WebStandardStreamableHTTPServerTransport,
  type CallToolResult,
  type GetPromptResult,
  type Icon,
  type JSONRPCResponse,
  type ServerContext,
  type Tool,
} from '@modelcontextprotocol/server';
import { errorBody, errors, AppError, type EnvelopeStyle } from '@app/http-errors';
import { jsonBody } from '@app/http-errors/validation';
import type { AuthConfig } from '../identity/config.js';
import { oauthUrls, publicOrigin, toAuthInfo } from '../identity/bearer.js';
import { serviceIconPath } from '../identity/service-icon.js';
import { usedConfirmations } from './confirmations.js';
import { answerRelay, askUser, bindAskedAt, CONFIRM_SCHEMA, confirmQuestion, readAnswer } from './elicitation.js';
import { INNER_CALL_HEADER, type InnerCalls } from './inner-calls.js';
import { sessionIds, type McpSession } from './sessions.js';
import { runTaskTool, type Confirm, type PreparedCall, type TaskAnswer } from './task-calls.js';
import { toRequest, type ArgumentProblem, type GeneratedTool } from './tools.js';
import { allowedActions, listTaskTool, type TaskTool } from './toolsets.js';

/** What a tool call answered: the REST status and JSON body (null for an empty one). */
export interface RestAnswer {
  status: number;
  body: unknown;
}

/** Calls one of the service's tools by operationId, as the prompt's caller, through the REST stack. */
export type CallOperation = (operationId: string, args?: Record<string, unknown>) => Promise<RestAnswer>;

/**
 * An MCP prompt built from the service's own data. `build` fetches what it needs through
 * `call` (the caller's scopes apply) and returns the text of one user message.
 */
export interface McpPrompt {
  name: string;
  title: string;
  description: string;
  arguments?: Array<{ name: string; description: string; required?: boolean }>;
  /** Scopes a caller needs to see and use the prompt. */
  scopes: string[];
  build(args: Record<string, string>, call: CallOperation): Promise<string>;
}

export interface McpOptions {
  auth: AuthConfig;
  /** The `all` toolset: one tool per operation. */
  tools: GeneratedTool[];
  /** The task-level tools of the other toolsets (`default`, `webhooks`), built on `tools`. */
  taskTools: TaskTool[];
  prompts: McpPrompt[];
  /** Told to the model on initialize: what the service is and the rules of its data. */
  instructions: string;
  envelope: EnvelopeStyle;
  bodyLimitBytes: number;
  publicUrl?: string;
  /** Browser origins that may call the server besides loopback ones (ALLOWED_ORIGINS and PUBLIC_URL). */
  allowedOrigins: readonly string[];
  /** Property names removed from every tool result wherever they appear (meetings: privateNotes). */
  redact?: string[];
  /** Rewrites every tool result's body after `redact` (clipboard: a sensitive item's content is null). */
  present?: (body: unknown) => unknown;
  version?: string;
  /** Carries clients' answers (elicitation) between replicas; null: this process alone. */
  redis: Redis | null;
  redisPrefix: string;
  logger: Logger;
  /** What session ids are signed with (a key is derived from it): the same for every replica of the service. */
  sessionSecret: string;
  /** How long a destructive call waits for the user's confirmation (default 50 s). */
  elicitationTimeoutMs?: number;
  /** How long after the user was asked a 2026-07-28 confirmation may be used, once (MCP_CONFIRMATION_SECONDS, at most 60). */
  confirmationSeconds: number;
  /** Tickets its tool calls' REST requests carry (the resource the caller was authenticated for, the rate limits it paid). */
  calls: InnerCalls;
}

/**
 * Under the SDK client's own 60 s request timeout, so a client that waited that long gets the
 * tool's answer (nothing changed), not its own timeout. The stream meanwhile carries the
 * transport's keep-alive comments, so the gateway's 60 s read timeout never ends it.
 */
const ELICITATION_TIMEOUT_MS = 50_000;

/**
 * The requestState codec's own expiry lies this far past a confirmation's lifetime, so a retry
 * that comes late is refused by the signed `at` with its reason (409), not by the SDK's bare
 * "invalid or expired"; a used confirmation's id is remembered as long as the state can be read.
 */
const STATE_GRACE_SECONDS = 60;

/** What a 2026-07-28 confirmation's signed requestState holds: the call's digest, a single-use id and when the user was asked. */
interface ConfirmationState {
  call: string;
  id: string;
  at: number;
}

/** The MCP request's caller stopped being valid (revoked, disconnected, expired) during the request. */
class CallerGone extends ProtocolError {
  constructor() {
    super(ProtocolErrorCode.InvalidRequest, 'The API key or access token was revoked or expired during this request: authenticate again (the next request is answered HTTP 401)');
  }
}

/**
 * One MCP request's state: its tool calls' ticket, whether a tool's REST call found its caller
 * gone, and the scopes an OAuth token was found to lack (the step-up challenge's).
 */
interface Exchange {
  req: Request;
  ticket: string;
  callerGone: boolean;
  stepUp?: string[];
  /** A confirmation could not be checked for reuse (Redis down): the request's answer is 503. */
  unavailable?: boolean;
}

const JSONRPC_SESSION_NOT_FOUND = -32001;
/** The Streamable HTTP transport's code for a request refused before any message is read. */
const CONNECTION_CLOSED = -32000;
/** How long a client may keep the tools/list of a 2026-07-28 request (the list changes only with a deploy or the token's scopes). */
const TOOLS_TTL_MS = 300_000;

/**
 * A destructive call on the 2026-07-28 revision that has no accepted confirmation yet: the
 * tools/call answers `input_required` with this question, nothing is sent.
 */
class AskFirst extends Error {
  constructor(readonly question: string) {
    super(question);
  }
}

/** The toolset of the one-per-operation tools; every other toolset is named by its task-level tools. */
const ALL = 'all';

/** The toolsets a connection asked for (`?toolsets=` or X-MCP-Toolsets; none: `default`) and whether it is read-only. */
function selection(req: Request, known: ReadonlySet<string>): { toolsets: Set<string>; readOnly: boolean } | { problem: string } {
  const query = typeof req.query.toolsets === 'string' ? req.query.toolsets : undefined;
  const header = req.get('x-mcp-toolsets');
  const named = (query ?? header ?? 'default').split(',').map((t) => t.trim()).filter(Boolean);
  const unknown = named.filter((t) => !known.has(t));
  if (unknown.length > 0 || named.length === 0) return { problem: `toolsets: unknown toolset ${unknown.join(', ') || '(none)'}; this server has ${[...known].join(', ')}` };
  const flag = typeof req.query.readonly === 'string' ? req.query.readonly : req.get('x-mcp-readonly');
  if (flag !== undefined && !['1', 'true', '0', 'false'].includes(flag)) return { problem: 'readonly must be 1 or 0' };
  return { toolsets: new Set(named), readOnly: flag === '1' || flag === 'true' };
}

/** Headers a tool call takes over from the MCP request that carries it. */
const FORWARDED = ['authorization', 'x-timezone', 'user-agent'] as const;
/** Tool calls reuse their connections to this process. */
const loopback = new Agent({ keepAlive: true, maxSockets: 64 });

/**
 * Sends a request to this same server, on the address and port the MCP request arrived at, so it
 * passes every middleware a REST request passes. The caller's address goes in X-Forwarded-For:
 * the process's own address is the one hop it trusts (TRUST_PROXY: loopback by default, one hop in
 * compose and Kubernetes), so limits by address still see the client.
 */
function sendToSelf(req: Request, method: string, url: string, headers: Record<string, string>, body: string | undefined): Promise<{ status: number; payload: string }> {
  return new Promise((resolve, reject) => {
    const out = httpRequest(
      { agent: loopback, host: req.socket.localAddress, port: req.socket.localPort, method, path: url, headers: { ...headers, 'x-forwarded-for': req.ip ?? '', ...(body === undefined ? {} : { 'content-length': String(Buffer.byteLength(body)) }) } },
      (answer) => {
        const chunks: Buffer[] = [];
        answer.on('data', (c: Buffer) => chunks.push(c));
        answer.on('end', () => resolve({ status: answer.statusCode ?? 502, payload: Buffer.concat(chunks).toString('utf8') }));
        answer.on('error', reject);
      },
    );
    out.on('error', reject);
    out.end(body);
  });
}

/** A tool's bad arguments, as the REST validation error naming each field. */
function invalidArguments(problems: ArgumentProblem[]): AppError {
  return errors.validation(problems, `Invalid arguments: ${problems.map((p) => `${p.path.slice(1)} ${p.message}`).join('; ')}`);
}

function withoutKeys(value: unknown, keys: ReadonlySet<string>): unknown {
  if (Array.isArray(value)) return value.map((v) => withoutKeys(v, keys));
  if (!value || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).filter(([k]) => !keys.has(k)).map(([k, v]) => [k, withoutKeys(v, keys)]));
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
      return (url.protocol === 'http:' || url.protocol === 'https:') && LOOPBACK_HOSTS.has(url.hostname) && url.origin === origin;
    } catch {
      return false;
    }
  };
  return (req, res, next) => {
    const origin = req.get('origin');
    if (origin === undefined || origins.has(origin) || isLoopback(origin)) return next();
    res.status(403).json({ jsonrpc: '2.0', error: { code: CONNECTION_CLOSED, message: `Origin ${origin.slice(0, 200)} may not call this MCP server` }, id: null });
  };
}

/** Where {@link mcpRouter} serves the service's MCP server: `/mcp/<service>`. */
export const mcpPath = (service: string): string => `/mcp/${service}`;

/**
 * {@link mcpPath}: the service as an MCP server over Streamable HTTP, stateless (a new server and
 * transport per request, no session id), so any replica answers any request. Bearer API keys and
 * OAuth access tokens only; without one, 401 with the RFC 9728 `resource_metadata` challenge.
 * Each tool call is sent to this same process as the REST request it stands for (same routes,
 * validation, scopes, rate limits and request log), so the tool and the REST call cannot disagree.
 */
export function mcpRouter(o: McpOptions): Router {
  const path = mcpPath(o.auth.service);
  const redact = new Set(o.redact ?? []);
  // A destructive operation takes `confirm` (the user agreed), which a client that cannot be asked must send.
  const withConfirm = (schema: GeneratedTool['inputSchema']) => ({ ...schema, properties: { ...schema.properties, confirm: { type: 'boolean', description: 'true once the user agreed: it cannot be undone (a client that answers elicitation is asked instead)' } } });
  const toolList = o.tools.map(({ name, title, description, inputSchema, annotations }) => ({ name, title, description, inputSchema: annotations.destructiveHint ? withConfirm(inputSchema) : inputSchema, annotations }));
  // requestState (2026-07-28 confirmations) is signed with a key of this service alone, the same on every replica.
  const stateSeconds = o.confirmationSeconds + STATE_GRACE_SECONDS;
  const stateCodec = createRequestStateCodec<ConfirmationState>({ key: Buffer.from(hkdfSync('sha256', o.sessionSecret, `mcp-request-state:${o.auth.service}`, 'mcp request state', 32)), ttlSeconds: stateSeconds });
  const used = usedConfirmations({ redis: o.redis, prefix: o.redisPrefix, logger: o.logger });
  const byName = new Map(o.tools.map((t, i) => [t.name, { tool: t, listed: toolList[i]! }]));
  const holds = (scopes: readonly string[], needed: readonly string[]) => needed.every((s) => scopes.includes(s));
  const fail = (err: AppError, requestId: string): CallToolResult => {
    const body = errorBody(o.envelope, err, requestId);
    return { isError: true, content: [{ type: 'text', text: JSON.stringify(body) }], structuredContent: body };
  };

  /**
   * A tool call refused for want of `needed`: for an OAuth token, the MCP request's answer is the
   * step-up challenge (HTTP 403 insufficient_scope naming them), so the client can ask the user for
   * them; an API key's scopes are the operator's to change, so it gets the isError result.
   */
  const stepUp = (x: Exchange, needed: readonly string[]) => {
    if (x.req.caller?.oauth) x.stepUp = [...needed];
  };

  /** Sends a tool's REST request into the app, as the MCP request's caller and client address. */
  const dispatch = async (x: Exchange, tool: GeneratedTool, args: Record<string, unknown>): Promise<RestAnswer | { problems: ArgumentProblem[] }> => {
    const { req } = x;
    const built = toRequest(tool, args);
    if (!built.ok) return { problems: built.problems };
    // The MCP request's id, so its log line and its tool calls' lines share it.
    const headers: Record<string, string> = { accept: 'application/json', 'x-request-id': req.id, [INNER_CALL_HEADER]: x.ticket, ...built.headers };
    for (const name of FORWARDED) {
      const value = req.headers[name];
      if (typeof value === 'string') headers[name] = value;
    }
    if (built.body !== undefined) headers['content-type'] = 'application/json';
    const answer = await sendToSelf(req, tool.route.method, built.url, headers, built.body === undefined ? undefined : JSON.stringify(built.body));
    // A 401 is the MCP request's answer (HTTP 401 with the challenge), never a tool result.
    if (answer.status === 401) {
      x.callerGone = true;
      throw new CallerGone();
    }
    let body: unknown = null;
    if (answer.payload.length > 0) {
      try {
        body = JSON.parse(answer.payload);
      } catch {
        body = answer.payload;
      }
    }
    const shown = redact.size > 0 ? withoutKeys(body, redact) : body;
    return { status: answer.status, body: o.present ? o.present(shown) : shown };
  };

  const callTool = async (x: Exchange, scopes: string[], name: string, rawArgs: Record<string, unknown>, confirm?: Confirm): Promise<CallToolResult> => {
    const { req } = x;
    const entry = byName.get(name);
    if (!entry) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${name}`);
    const missing = entry.tool.scopes.find((s) => !scopes.includes(s));
    if (missing) {
      stepUp(x, entry.tool.scopes);
      return fail(errors.forbidden('insufficient_scope', `This tool needs the scope ${missing}`), req.id);
    }
    const { confirm: confirmed, ...args } = rawArgs;
    if (entry.tool.annotations.destructiveHint) {
      // Asked (the client answers elicitation, or 2026-07-28's input_required), else only with confirm: true.
      if (confirm) {
        const no = await confirm([{ action: { name, op: entry.tool, readOnly: false, destructive: true }, opArgs: args }]);
        if (no) return fail(new AppError(no.status, no.status === 409 ? 'not_confirmed' : 'service_unavailable', no.message), req.id);
      } else if (confirmed !== true) {
        return fail(invalidArguments([{ path: '/confirm', message: `must be true to ${name}: ask the user first, it cannot be undone` }]), req.id);
      }
    }
    const answer = await dispatch(x, entry.tool, args);
    if ('problems' in answer) return fail(invalidArguments(answer.problems), req.id);
    const { status, body } = answer;
    const text = body === null ? `${status} (no content)` : JSON.stringify(body);
    const structured = body !== null && typeof body === 'object' && !Array.isArray(body) ? { structuredContent: body as Record<string, unknown> } : {};
    return { ...(status >= 400 ? { isError: true } : {}), content: [{ type: 'text', text }], ...structured };
  };

  /** A task-level tool's call: its answer (or refusal) in the shape of its outputSchema. */
  const callTaskTool = async (x: Exchange, tool: TaskTool, scopes: string[], readOnly: boolean, args: Record<string, unknown>, confirm?: Confirm): Promise<CallToolResult> => {
    const { req } = x;
    const allowed = allowedActions(tool, (needed) => holds(scopes, needed), readOnly);
    const refuse = (err: AppError, status: number): CallToolResult => {
      const answer: TaskAnswer = { action: typeof args.action === 'string' ? args.action : '', status, result: errorBody(o.envelope, err, req.id), nextCursor: null, truncated: false };
      return { isError: true, content: [{ type: 'text', text: JSON.stringify(answer) }], structuredContent: answer };
    };
    if (allowed.length === 0) {
      if (readOnly && allowedActions(tool, (needed) => holds(scopes, needed), false).length > 0) {
        return refuse(errors.forbidden('read_only', `${tool.name} changes data and this connection is read-only`), 403);
      }
      stepUp(x, tool.actions[0]!.op.scopes);
      return refuse(errors.forbidden('insufficient_scope', `This tool needs the scope ${tool.actions[0]!.op.scopes.join(' and ')}`), 403);
    }
    const outcome = await runTaskTool(tool, allowed, args, (op, opArgs) => dispatch(x, op, opArgs), confirm);
    if ('refusal' in outcome) {
      if (outcome.refusal === 'scope') {
        if (!holds(scopes, outcome.scopes)) stepUp(x, outcome.scopes);
        return refuse(errors.forbidden('insufficient_scope', outcome.message), 403);
      }
      if (outcome.refusal === 'unconfirmed') return refuse(new AppError(outcome.status, outcome.status === 409 ? 'not_confirmed' : 'service_unavailable', outcome.message), outcome.status);
      return refuse(invalidArguments(outcome.problems), 400);
    }
    return { ...(outcome.isError ? { isError: true } : {}), content: [{ type: 'text', text: JSON.stringify(outcome.answer) }], structuredContent: outcome.answer };
  };

  /** What a destructive call will do, for the user: the operation, the record's name (read first, when the caller may) and its id. */
  const readerOf = new Map(o.tools.filter((t) => t.route.method === 'GET').map((t) => [t.route.path, t]));
  const describe = async (x: Exchange, scopes: string[], call: PreparedCall): Promise<string> => {
    const { op } = call.action;
    const ids = op.route.pathArgs.map((name) => `${name} ${String(call.opArgs[name])}`).join(', ');
    const reader = readerOf.get(op.route.path);
    let name: string | undefined;
    if (reader && holds(scopes, reader.scopes)) {
      const read = await dispatch(x, reader, Object.fromEntries(reader.route.pathArgs.map((a) => [a, call.opArgs[a]])));
      if (!('problems' in read) && read.status === 200) name = recordName(read.body);
    }
    return `${op.title.replace(/\.$/, '')}${name === undefined ? '' : ` "${name}"`} (${ids})`;
  };

  /**
   * Confirmation on the 2026-07-28 revision: the first call throws {@link AskFirst} (answered
   * `input_required`, with the call's digest, a random id and the time it asked signed in
   * `requestState`); the retry carries the user's answer and that state, and acts only when both
   * are for this very call (same credential, tool and arguments), within `confirmationSeconds` of
   * the question, and once: the id is claimed across replicas (Redis) or in this process. What
   * was confirmed is bound into the calls (a cutoff parameter becomes the time of the question).
   */
  const multiRoundTrip = (x: Exchange, ctx: ServerContext, digest: string, describeCall: (call: PreparedCall) => Promise<string>): Confirm => async (calls) => {
    const answer = inputResponse(ctx.mcpReq.inputResponses, 'confirm');
    const state = ctx.mcpReq.requestState<Partial<ConfirmationState>>();
    if (answer.kind !== 'elicit' || state?.call !== digest || typeof state.id !== 'string' || typeof state.at !== 'number') {
      throw new AskFirst(await confirmQuestion(calls, describeCall));
    }
    const no = readAnswer(answer);
    if (no) return no;
    if (Date.now() - state.at > o.confirmationSeconds * 1000) {
      return { status: 409, message: `The confirmation expired (it may be used within ${o.confirmationSeconds} s of the question): nothing was changed; call the tool again to ask the user anew` };
    }
    const claim = await used.claim(state.id, stateSeconds);
    if (claim === 'spent') return { status: 409, message: 'This confirmation was already used: nothing was changed; call the tool again to ask the user anew' };
    if (claim === 'unavailable') {
      x.unavailable = true;
      throw new ProtocolError(ProtocolErrorCode.InternalError, 'The confirmation could not be checked for reuse');
    }
    bindAskedAt(calls, state.at);
    return undefined;
  };

  const server = (x: Exchange, scopes: string[], chosen: { toolsets: Set<string>; readOnly: boolean }, session: McpSession | undefined): Server => {
    const { req } = x;
    // The service's icon, by URL on the origin the request came by (the account page serves it).
    const icons: Icon[] = [{ src: `${publicOrigin(req, o.publicUrl)}${serviceIconPath(o.auth.service)}`, mimeType: 'image/svg+xml' }];
    const s = new Server(
      { name: `${o.auth.service}`, title: `${o.auth.service.charAt(0).toUpperCase()}${o.auth.service.slice(1)}`, version: o.version ?? '1.0.0', icons },
      {
        capabilities: { tools: {}, prompts: {} },
        instructions: o.instructions,
        cacheHints: { 'tools/list': { ttlMs: TOOLS_TTL_MS, cacheScope: 'private' } },
        requestState: { verify: (state, ctx) => stateCodec.verify(state, ctx) },
      },
    );
    const perOperation = chosen.toolsets.has(ALL) ? o.tools.filter((t) => holds(scopes, t.scopes) && (!chosen.readOnly || t.annotations.readOnlyHint)) : [];
    const taskLevel = o.taskTools
      .filter((t) => chosen.toolsets.has(t.toolset))
      .map((t) => ({ tool: t, actions: allowedActions(t, (needed) => holds(scopes, needed), chosen.readOnly) }))
      .filter((t) => t.actions.length > 0);
    // A fixed order: the service's operations as its document lists them, then the task-level tools as declared.
    s.setRequestHandler('tools/list', async () => ({
      tools: [...perOperation.map((t) => ({ ...byName.get(t.name)!.listed, icons })), ...taskLevel.map((t) => ({ ...listTaskTool(t.tool, t.actions), icons }))] as Tool[],
    }));
    s.setRequestHandler('tools/call', async (request, ctx): Promise<CallToolResult> => {
      const { name } = request.params;
      const args = request.params.arguments ?? {};
      const task = o.taskTools.find((t) => t.name === name && chosen.toolsets.has(t.toolset));
      const describeCall = (call: PreparedCall) => describe(x, scopes, call);
      const digest = createHash('sha256').update(JSON.stringify([req.caller!.credentialId, name, args])).digest('base64url');
      // 2026-07-28: a multi round-trip; older: a client that answers elicitation is asked, any other needs confirm: true.
      const confirm = ctx.mcpReq.envelope !== undefined
        ? multiRoundTrip(x, ctx, digest, describeCall)
        : session?.elicitation ? askUser((params, options) => ctx.mcpReq.send({ method: 'elicitation/create', params }, options), describeCall, o.elicitationTimeoutMs ?? ELICITATION_TIMEOUT_MS) : undefined;
      try {
        if (task) return await callTaskTool(x, task, scopes, chosen.readOnly, args, confirm);
        if (!chosen.toolsets.has(ALL)) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${name}`);
        if (chosen.readOnly && byName.get(name) && !byName.get(name)!.tool.annotations.readOnlyHint) {
          return fail(errors.forbidden('read_only', `${name} changes data and this connection is read-only`), req.id);
        }
        return await callTool(x, scopes, name, args, confirm);
      } catch (err) {
        if (!(err instanceof AskFirst)) throw err;
        return inputRequired({
          inputRequests: { confirm: inputRequired.elicit({ mode: 'form', message: err.question, requestedSchema: CONFIRM_SCHEMA }) },
          requestState: await stateCodec.mint({ call: digest, id: randomUUID(), at: Date.now() }),
        }) as unknown as CallToolResult;
      }
    });
    const prompts = o.prompts.filter((p) => holds(scopes, p.scopes));
    s.setRequestHandler('prompts/list', async () => ({
      prompts: prompts.map(({ name, title, description, arguments: args }) => ({ name, title, description, ...(args ? { arguments: args } : {}) })),
    }));
    s.setRequestHandler('prompts/get', async (request): Promise<GetPromptResult> => {
      const prompt = prompts.find((p) => p.name === request.params.name);
      if (!prompt) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown prompt: ${request.params.name}`);
      const args = request.params.arguments ?? {};
      for (const a of prompt.arguments ?? []) {
        if (a.required && !args[a.name]) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `The prompt ${prompt.name} needs the argument ${a.name}`);
      }
      const call: CallOperation = async (operationId, callArgs = {}) => {
        const entry = byName.get(operationId);
        if (!entry) throw new Error(`${operationId} is not a tool of this service`);
        const answer = await dispatch(x, entry.tool, callArgs);
        if ('problems' in answer) throw new ProtocolError(ProtocolErrorCode.InvalidParams, invalidArguments(answer.problems).message);
        return answer;
      };
      const text = await prompt.build(args, call);
      return { description: prompt.description, messages: [{ role: 'user', content: { type: 'text', text } }] };
    });
    return s;
  };

  // The caller was resolved by `identify` from this same Authorization header (a database outage
  // there is already a 503), so the SDK's bearer check only decides 401 (or 403) and its challenge.
  const bearerCheck = (req: Request, res: Response, verify: (token: string) => ReturnType<typeof toAuthInfo>, next: () => void, requiredScopes?: string[]) => {
    const { resourceMetadata } = oauthUrls(o.auth.service, publicOrigin(req, o.publicUrl));
    return requireBearerAuth({ verifier: { verifyAccessToken: async (token) => verify(token) }, resourceMetadataUrl: resourceMetadata, requiredScopes })(req, res, next);
  };
  const keyCaller = (req: Request) => (req.caller?.kind === 'key' ? req.caller : undefined);
  const bearer: RequestHandler = (req, res, next) => {
    void bearerCheck(req, res, (token) => toAuthInfo(token, keyCaller(req)), next);
  };
  /**
   * The bearer check's own answer for what a tool call found: 401 and its challenge for a caller
   * gone during the request, or 403 insufficient_scope naming the scopes a token lacks (step-up).
   */
  const challenge = (req: Request, res: Response, x: Exchange) => {
    if (x.callerGone) {
      return bearerCheck(req, res, () => {
        throw new OAuthError(OAuthErrorCode.InvalidToken, 'The API key or access token was revoked or expired during this request');
      }, () => {});
    }
    return bearerCheck(req, res, (token) => toAuthInfo(token, keyCaller(req)), () => {}, x.stepUp);
  };
  const relay = answerRelay({ redis: o.redis, prefix: o.redisPrefix, logger: o.logger });
  const ids = sessionIds(o.sessionSecret, o.auth.service);
  const rpcError = (res: Response, status: number, code: number, message: string) => {
    res.status(status).json({ jsonrpc: '2.0', error: { code, message }, id: null });
  };
  const rpcAnswer = (status: number, code: number, message: string, headers: Record<string, string> = {}) =>
    globalThis.Response.json({ jsonrpc: '2.0', error: { code, message }, id: null }, { status, headers });

  /** Clients' answers to this server's requests (elicitation): handed to the process that waits for them. */
  const answer = async (credentialId: string, answers: JSONRPCResponse[]): Promise<globalThis.Response> => {
    const outcomes = await Promise.all(answers.map((a) => relay.deliver(credentialId, a)));
    if (outcomes.includes('unavailable')) {
      return rpcAnswer(503, ProtocolErrorCode.InternalError, 'The answer could not be passed on (Redis, which carries it between replicas, is unavailable); the request it answers ends with nothing changed', { 'Retry-After': '2' });
    }
    if (outcomes.includes('unknown')) return rpcAnswer(400, ProtocolErrorCode.InvalidRequest, 'No request of this server awaits this answer: it was answered already, timed out, or is another client\'s');
    return new globalThis.Response(null, { status: 202 });
  };

  const router = Router();
  router.all(path, rebindingGuard(o.allowedOrigins), bearer);
  // No standalone stream (GET) and no session to end (DELETE): a session is only a signed note of
  // the client's capabilities, so there is nothing to close (the SDK client takes 405 as that).
  router.all(path, (req, res, next) => {
    if (req.method === 'POST') return next();
    res.status(405).set('Allow', 'POST').json({ jsonrpc: '2.0', error: { code: CONNECTION_CLOSED, message: 'This MCP server has no stream to open and no session to end: send each JSON-RPC message with POST' }, id: null });
  });
  const toolsets = new Set([ALL, ...o.taskTools.map((t) => t.toolset)]);
  // 2026-07-28: the SDK's per-request entry, made once; the server it builds for a request is the
  // one that request's handler below put here (keyed by the web request it hands the entry).
  const modernServers = new WeakMap<globalThis.Request, () => Server>();
  const modern = createMcpHandler(({ requestInfo }) => modernServers.get(requestInfo!)!(), { legacy: 'reject', maxRequestBodySize: o.bodyLimitBytes });
  router.post(path, jsonBody({ limit: o.bodyLimitBytes }), async (req, res) => {
    // One message per request: a batch would run any number of requests for one HTTP request and one count against the rate limit.
    if (Array.isArray(req.body)) return rpcError(res, 400, ProtocolErrorCode.InvalidRequest, 'A JSON-RPC batch (an array) is not accepted (no MCP revision since 2025-06-18 has them): send each message in its own request');
    const scopes = req.auth!.scopes;
    const credentialId = req.caller!.credentialId;
    const selected = selection(req, toolsets);
    if ('problem' in selected) return rpcError(res, 400, ProtocolErrorCode.InvalidRequest, selected.problem);
    const chosen = selected;
    // The resource this request was authenticated for (identify checked the token's against it).
    const calls = o.calls.open(oauthUrls(o.auth.service, publicOrigin(req, o.publicUrl)).resource);
    const x: Exchange = { req, ticket: calls.ticket, callerGone: false };
    const closing: Array<() => void> = [];
    res.on('close', () => {
      calls.close();
      for (const close of closing) close();
    });
    const listener = getRequestListener(async (request) => {
      // 2026-07-28 (the version in the request's _meta): served by the SDK's per-request handler, no session.
      if (!(await isLegacyRequest(request, req.body))) {
        modernServers.set(request, () => server(x, scopes, chosen, undefined));
        return settle(await modern.fetch(request, { authInfo: req.auth, parsedBody: req.body }));
      }
      const legacy = await legacyExchange(request);
      return legacy instanceof globalThis.Response ? legacy : settle(legacy.response);
    }, { overrideGlobalObjects: false });

    /** Nothing is sent yet (JSON, or a stream whose first event is its end): the 401, 403 or 503 is the answer (then RESPONSE_ALREADY_SENT for the first two). */
    async function settle(response: globalThis.Response): Promise<globalThis.Response> {
      if (!x.callerGone && !x.stepUp && !x.unavailable) return response;
      await response.body?.cancel();
      if (x.unavailable) {
        return rpcAnswer(503, ProtocolErrorCode.InternalError, 'The confirmation could not be checked for reuse (Redis, which records used confirmations across replicas, is unavailable): nothing was changed; send the same retry again shortly', { 'Retry-After': '2' });
      }
      await challenge(req, res, x);
      return RESPONSE_ALREADY_SENT;
    }

    /**
     * 2025-11-25 and 2025-06-18: the initialize handshake, its signed session id (what the client
     * declared), and elicitation whose answer may reach another replica (the relay).
     */
    async function legacyExchange(request: globalThis.Request): Promise<globalThis.Response | { response: globalThis.Response }> {
      const message: unknown = req.body;
      const initialize = isInitialize(message) ? message : undefined;
      let session: McpSession | undefined;
      const sessionId = req.get('mcp-session-id');
      if (sessionId !== undefined && !initialize) {
        session = ids.read(sessionId);
        // Unknown, altered, or issued to another credential: not a session of this server (the spec's 404).
        if (!session || session.credentialId !== credentialId) return rpcAnswer(404, JSONRPC_SESSION_NOT_FOUND, 'Session not found: initialize a new one');
      }
      if (isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message)) return answer(credentialId, [message]);
      // A call that may ask the user is answered as a stream (the question goes out on it); every other as JSON.
      const asks = session?.elicitation === true && mayAsk(message, chosen, scopes);
      const s = server(x, scopes, chosen, session);
      const transport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: initialize ? () => ids.issue({ credentialId, elicitation: declaresElicitation(initialize) }) : undefined,
        enableJsonResponse: !asks,
      });
      const release = asks ? relay.attach(transport, credentialId) : () => {};
      closing.push(() => {
        release();
        void transport.close();
        void s.close();
      });
      await s.connect(transport);
      const response = await transport.handleRequest(request, { authInfo: req.auth, parsedBody: req.body });
      return { response: asks ? await untilFirstEvent(response) : response };
    }
    await listener(req, res);
  });
  return router;

  /** Whether a message is a call of a task-level tool that may run a destructive action for this caller. */
  function mayAsk(m: unknown, chosen: { toolsets: Set<string>; readOnly: boolean }, scopes: string[]): boolean {
    if (!isObject(m) || m.method !== 'tools/call' || !isObject(m.params)) return false;
    const tool = o.taskTools.find((t) => t.name === (m.params as Record<string, unknown>).name && chosen.toolsets.has(t.toolset));
    return tool !== undefined && allowedActions(tool, (needed) => holds(scopes, needed), chosen.readOnly).some((a) => a.destructive);
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const isInitialize = (m: unknown): m is { params: { capabilities?: Record<string, unknown> } } => isObject(m) && m.method === 'initialize' && isObject(m.params);
/** A client answers elicitation when it declares the capability (an empty object is form mode). */
const declaresElicitation = (m: { params: { capabilities?: Record<string, unknown> } }) => isObject(m.params.capabilities?.elicitation);

/** The field that names a record for a person, where it has one (`item` is where tasks puts it). */
const NAMES = ['title', 'name', 'url', 'content', 'text', 'email'];
function recordName(body: unknown): string | undefined {
  const record = isObject(body) && isObject(body.item) ? body.item : body;
  if (!isObject(record)) return undefined;
  const field = NAMES.find((n) => typeof record[n] === 'string' && record[n] !== '');
  if (field === undefined) return undefined;
  const text = (record[field] as string).replace(/\s+/g, ' ');
  return text.length > 80 ? `${text.slice(0, 79)}…` : text;
}

/**
 * A stream answer held until its first event, so that a call which ends before it has asked
 * anything can still be answered with an HTTP status (the 401); the events then flow unchanged.
 */
async function untilFirstEvent(response: globalThis.Response): Promise<globalThis.Response> {
  if (!response.body) return response;
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const first = await reader.read();
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      if (first.done) controller.close();
      else controller.enqueue(first.value);
    },
    async pull(controller) {
      const next = await reader.read();
      if (next.done) controller.close();
      else controller.enqueue(next.value);
    },
    cancel: (reason) => reader.cancel(reason),
  });
  return new globalThis.Response(body, { status: response.status, headers: response.headers });
}
