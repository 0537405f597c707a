/*
 * The JSON-RPC methods of one MCP request: tools/list and tools/call (per-operation and
 * task-level tools, a destructive one confirmed as the request's revision allows), prompts/list
 * and prompts/get, all for the caller's scopes and chosen toolsets.
 */
import { createHash, randomUUID } from 'node:crypto';
import {
  inputRequired,
  inputResponse,
  ProtocolError,
  ProtocolErrorCode,
  Server,
  type CallToolRequest,
  type CallToolResult,
  type GetPromptRequest,
  type GetPromptResult,
  type Icon,
  type ServerContext,
  type Tool,
} from '@modelcontextprotocol/server';
import { errorBody, errors, AppError } from '@app/http-errors';
import { publicOrigin } from '../identity/bearer.js';
import { serviceIconPath } from '../identity/service-icon.js';
import { askUser, bindAskedAt, CONFIRM_SCHEMA, confirmQuestion, readAnswer } from './elicitation.js';
import type { McpSession } from './sessions.js';
import { runTaskTool, type Confirm, type PreparedCall, type TaskAnswer } from './task-calls.js';
import { allowedActions, listTaskTool, type TaskTool } from './toolsets.js';
import {
  ALL,
  holds,
  isObject,
  type CallOperation,
  type ConfirmationState,
  type Exchange,
  type McpContext,
} from './context.js';
import { stepUp } from './challenge.js';
import { callRest, invalidArguments } from './rest-call.js';

/**
 * Under the SDK client's own 60 s request timeout, so a client that waited that long gets the
 * tool's answer (nothing changed), not its own timeout. The stream meanwhile carries the
 * transport's keep-alive comments, so the gateway's 60 s read timeout never ends it.
 */
const ELICITATION_TIMEOUT_MS = 50_000;
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

/**
 * The MCP server that answers one request's JSON-RPC methods (tools/list, tools/call,
 * prompts/list, prompts/get) for its caller's scopes and chosen toolsets. `session` is the
 * legacy revisions' (what the client declared at initialize); a 2026-07-28 request has none.
 */
export function mcpServer(c: McpContext, x: Exchange, session: McpSession | undefined): Server {
  const { o } = c;
  // The service's icon, by URL on the origin the request came by (the account page serves it).
  const icons: Icon[] = [
    { src: `${publicOrigin(x.req, o.publicUrl)}${serviceIconPath(o.auth.service)}`, mimeType: 'image/svg+xml' },
  ];
  const s = new Server(
    {
      name: `${o.auth.service}`,
      title: `${o.auth.service.charAt(0).toUpperCase()}${o.auth.service.slice(1)}`,
      version: o.version ?? '1.0.0',
      icons,
    },
    {
      capabilities: { tools: {}, prompts: {} },
      instructions: o.instructions,
      cacheHints: { 'tools/list': { ttlMs: TOOLS_TTL_MS, cacheScope: 'private' } },
      requestState: { verify: (state, ctx) => c.stateCodec.verify(state, ctx) },
    },
  );
  s.setRequestHandler('tools/list', async () => ({ tools: listTools(c, x, icons) }));
  s.setRequestHandler('tools/call', (request, ctx) => callAnyTool(c, x, session, request, ctx));
  const prompts = o.prompts.filter((p) => holds(x.scopes, p.scopes));
  s.setRequestHandler('prompts/list', async () => ({
    prompts: prompts.map(({ name, title, description, arguments: args }) => ({
      name,
      title,
      description,
      ...(args ? { arguments: args } : {}),
    })),
  }));
  s.setRequestHandler('prompts/get', (request) => getPrompt(c, x, prompts, request));
  return s;
}

/** The tools the caller may use, in a fixed order: the service's operations as its document lists them, then the task-level tools as declared. */
function listTools(c: McpContext, x: Exchange, icons: Icon[]): Tool[] {
  const { scopes, chosen } = x;
  const perOperation = chosen.toolsets.has(ALL)
    ? c.o.tools.filter((t) => holds(scopes, t.scopes) && (!chosen.readOnly || t.annotations.readOnlyHint))
    : [];
  const taskLevel = c.o.taskTools
    .filter((t) => chosen.toolsets.has(t.toolset))
    .map((t) => ({ tool: t, actions: allowedActions(t, (needed) => holds(scopes, needed), chosen.readOnly) }))
    .filter((t) => t.actions.length > 0);
  return [
    ...perOperation.map((t) => ({ ...c.byName.get(t.name)!.listed, icons })),
    ...taskLevel.map((t) => ({ ...listTaskTool(t.tool, t.actions), icons })),
  ] as Tool[];
}

/** tools/call: the task-level tool or the operation named, asking the user first where it destroys, as the request's revision does. */
async function callAnyTool(
  c: McpContext,
  x: Exchange,
  session: McpSession | undefined,
  request: CallToolRequest,
  ctx: ServerContext,
): Promise<CallToolResult> {
  const { req, chosen } = x;
  const { name } = request.params;
  const args = request.params.arguments ?? {};
  const task = c.o.taskTools.find((t) => t.name === name && chosen.toolsets.has(t.toolset));
  const describeCall = (call: PreparedCall) => describe(c, x, call);
  const digest = createHash('sha256')
    .update(JSON.stringify([req.caller!.credentialId, name, args]))
    .digest('base64url');
  // 2026-07-28: a multi round-trip; older: a client that answers elicitation is asked, any other needs confirm: true.
  const confirm =
    ctx.mcpReq.envelope !== undefined
      ? multiRoundTrip(c, x, ctx, digest, describeCall)
      : session?.elicitation
        ? askUser(
            (params, options) => ctx.mcpReq.send({ method: 'elicitation/create', params }, options),
            describeCall,
            c.o.elicitationTimeoutMs ?? ELICITATION_TIMEOUT_MS,
          )
        : undefined;
  try {
    if (task) return await callTaskTool(c, x, task, args, confirm);
    if (!chosen.toolsets.has(ALL)) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${name}`);
    if (chosen.readOnly && c.byName.get(name) && !c.byName.get(name)!.tool.annotations.readOnlyHint) {
      return fail(c, errors.forbidden('read_only', `${name} changes data and this connection is read-only`), req.id);
    }
    return await callTool(c, x, name, args, confirm);
  } catch (err) {
    if (!(err instanceof AskFirst)) throw err;
    return inputRequired({
      inputRequests: {
        confirm: inputRequired.elicit({ mode: 'form', message: err.question, requestedSchema: CONFIRM_SCHEMA }),
      },
      requestState: await c.stateCodec.mint({ call: digest, id: randomUUID(), at: Date.now() }),
    }) as unknown as CallToolResult;
  }
}

/** prompts/get: the prompt's one user message, built through the caller's own tool calls. */
async function getPrompt(
  c: McpContext,
  x: Exchange,
  prompts: McpContext['o']['prompts'],
  request: GetPromptRequest,
): Promise<GetPromptResult> {
  const prompt = prompts.find((p) => p.name === request.params.name);
  if (!prompt) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown prompt: ${request.params.name}`);
  const args = request.params.arguments ?? {};
  for (const a of prompt.arguments ?? []) {
    if (a.required && !args[a.name])
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `The prompt ${prompt.name} needs the argument ${a.name}`,
      );
  }
  const call: CallOperation = async (operationId, callArgs = {}) => {
    const entry = c.byName.get(operationId);
    if (!entry) throw new Error(`${operationId} is not a tool of this service`);
    const answer = await callRest(c, x, entry.tool, callArgs);
    if ('problems' in answer)
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, invalidArguments(answer.problems).message);
    return answer;
  };
  const text = await prompt.build(args, call);
  return { description: prompt.description, messages: [{ role: 'user', content: { type: 'text', text } }] };
}

function fail(c: McpContext, err: AppError, requestId: string): CallToolResult {
  const body = errorBody(c.o.envelope, err, requestId);
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(body) }], structuredContent: body };
}

/** A one-per-operation tool's call: the REST answer as the tool result. */
async function callTool(
  c: McpContext,
  x: Exchange,
  name: string,
  rawArgs: Record<string, unknown>,
  confirm?: Confirm,
): Promise<CallToolResult> {
  const { req, scopes } = x;
  const entry = c.byName.get(name);
  if (!entry) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${name}`);
  const missing = entry.tool.scopes.find((s) => !scopes.includes(s));
  if (missing) {
    stepUp(x, entry.tool.scopes);
    return fail(c, errors.forbidden('insufficient_scope', `This tool needs the scope ${missing}`), req.id);
  }
  const { confirm: confirmed, ...args } = rawArgs;
  if (entry.tool.annotations.destructiveHint) {
    // Asked (the client answers elicitation, or 2026-07-28's input_required), else only with confirm: true.
    if (confirm) {
      const no = await confirm([
        { action: { name, op: entry.tool, readOnly: false, destructive: true }, opArgs: args },
      ]);
      if (no)
        return fail(
          c,
          new AppError(no.status, no.status === 409 ? 'not_confirmed' : 'service_unavailable', no.message),
          req.id,
        );
    } else if (confirmed !== true) {
      return fail(
        c,
        invalidArguments([
          { path: '/confirm', message: `must be true to ${name}: ask the user first, it cannot be undone` },
        ]),
        req.id,
      );
    }
  }
  const answer = await callRest(c, x, entry.tool, args);
  if ('problems' in answer) return fail(c, invalidArguments(answer.problems), req.id);
  const { status, body } = answer;
  const text = body === null ? `${status} (no content)` : JSON.stringify(body);
  const structured =
    body !== null && typeof body === 'object' && !Array.isArray(body)
      ? { structuredContent: body as Record<string, unknown> }
      : {};
  return { ...(status >= 400 ? { isError: true } : {}), content: [{ type: 'text', text }], ...structured };
}

/** A task-level tool's call: its answer (or refusal) in the shape of its outputSchema. */
async function callTaskTool(
  c: McpContext,
  x: Exchange,
  tool: TaskTool,
  args: Record<string, unknown>,
  confirm?: Confirm,
): Promise<CallToolResult> {
  const { req, scopes } = x;
  const { readOnly } = x.chosen;
  const allowed = allowedActions(tool, (needed) => holds(scopes, needed), readOnly);
  const refuse = (err: AppError, status: number): CallToolResult => {
    const answer: TaskAnswer = {
      action: typeof args.action === 'string' ? args.action : '',
      status,
      result: errorBody(c.o.envelope, err, req.id),
      nextCursor: null,
      truncated: false,
    };
    return { isError: true, content: [{ type: 'text', text: JSON.stringify(answer) }], structuredContent: answer };
  };
  if (allowed.length === 0) {
    if (readOnly && allowedActions(tool, (needed) => holds(scopes, needed), false).length > 0) {
      return refuse(errors.forbidden('read_only', `${tool.name} changes data and this connection is read-only`), 403);
    }
    stepUp(x, tool.actions[0]!.op.scopes);
    return refuse(
      errors.forbidden('insufficient_scope', `This tool needs the scope ${tool.actions[0]!.op.scopes.join(' and ')}`),
      403,
    );
  }
  const outcome = await runTaskTool(tool, allowed, args, (op, opArgs) => callRest(c, x, op, opArgs), confirm);
  if ('refusal' in outcome) {
    if (outcome.refusal === 'scope') {
      if (!holds(scopes, outcome.scopes)) stepUp(x, outcome.scopes);
      return refuse(errors.forbidden('insufficient_scope', outcome.message), 403);
    }
    if (outcome.refusal === 'unconfirmed')
      return refuse(
        new AppError(outcome.status, outcome.status === 409 ? 'not_confirmed' : 'service_unavailable', outcome.message),
        outcome.status,
      );
    return refuse(invalidArguments(outcome.problems), 400);
  }
  return {
    ...(outcome.isError ? { isError: true } : {}),
    content: [{ type: 'text', text: JSON.stringify(outcome.answer) }],
    structuredContent: outcome.answer,
  };
}

/** What a destructive call will do, for the user: the operation, the record's name (read first, when the caller may) and its id. */
async function describe(c: McpContext, x: Exchange, call: PreparedCall): Promise<string> {
  const { op } = call.action;
  const ids = op.route.pathArgs.map((name) => `${name} ${String(call.opArgs[name])}`).join(', ');
  const reader = c.readerOf.get(op.route.path);
  let name: string | undefined;
  if (reader && holds(x.scopes, reader.scopes)) {
    const read = await callRest(
      c,
      x,
      reader,
      Object.fromEntries(reader.route.pathArgs.map((a) => [a, call.opArgs[a]])),
    );
    if (!('problems' in read) && read.status === 200) name = recordName(read.body);
  }
  return `${op.title.replace(/\.$/, '')}${name === undefined ? '' : ` "${name}"`} (${ids})`;
}

/**
 * Confirmation on the 2026-07-28 revision: the first call throws {@link AskFirst} (answered
 * `input_required`, with the call's digest, a random id and the time it asked signed in
 * `requestState`); the retry carries the user's answer and that state, and acts only when both
 * are for this very call (same credential, tool and arguments), within `confirmationSeconds` of
 * the question, and once: the id is claimed across replicas (Redis) or in this process. What
 * was confirmed is bound into the calls (a cutoff parameter becomes the time of the question).
 */
const multiRoundTrip =
  (
    c: McpContext,
    x: Exchange,
    ctx: ServerContext,
    digest: string,
    describeCall: (call: PreparedCall) => Promise<string>,
  ): Confirm =>
  async (calls) => {
    const answer = inputResponse(ctx.mcpReq.inputResponses, 'confirm');
    const state = ctx.mcpReq.requestState<Partial<ConfirmationState>>();
    if (
      answer.kind !== 'elicit' ||
      state?.call !== digest ||
      typeof state.id !== 'string' ||
      typeof state.at !== 'number'
    ) {
      throw new AskFirst(await confirmQuestion(calls, describeCall));
    }
    const no = readAnswer(answer);
    if (no) return no;
    const seconds = c.o.confirmationSeconds;
    if (Date.now() - state.at > seconds * 1000) {
      return {
        status: 409,
        message: `The confirmation expired (it may be used within ${seconds} s of the question): nothing was changed; call the tool again to ask the user anew`,
      };
    }
    const claim = await c.used.claim(state.id, c.stateSeconds);
    if (claim === 'spent')
      return {
        status: 409,
        message: 'This confirmation was already used: nothing was changed; call the tool again to ask the user anew',
      };
    if (claim === 'unavailable') {
      x.unavailable = true;
      throw new ProtocolError(ProtocolErrorCode.InternalError, 'The confirmation could not be checked for reuse');
    }
    bindAskedAt(calls, state.at);
    return undefined;
  };

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
