/*
 * The 2025-11-25 and 2025-06-18 revisions: the initialize handshake and its signed session id
 * on the SDK's Streamable HTTP transport, and the clients' answers to elicitation, which may
 * arrive at another replica than the one that asked.
 */
import {
  isJSONRPCErrorResponse,
  isJSONRPCResultResponse,
  ProtocolErrorCode,
  WebStandardStreamableHTTPServerTransport,
  type JSONRPCResponse,
} from '@modelcontextprotocol/server';
import type { McpSession } from './sessions.js';
import { allowedActions } from './toolsets.js';
import { holds, isObject, type Exchange, type McpContext } from './context.js';
import { mcpServer } from './dispatch.js';

const JSONRPC_SESSION_NOT_FOUND = -32001;

const rpcAnswer = (status: number, code: number, message: string, headers: Record<string, string> = {}) =>
  globalThis.Response.json({ jsonrpc: '2.0', error: { code, message }, id: null }, { status, headers });

const isInitialize = (m: unknown): m is { params: { capabilities?: Record<string, unknown> } } =>
  isObject(m) && m.method === 'initialize' && isObject(m.params);
/** A client answers elicitation when it declares the capability (an empty object is form mode). */
const declaresElicitation = (m: { params: { capabilities?: Record<string, unknown> } }) =>
  isObject(m.params.capabilities?.elicitation);

/**
 * 2025-11-25 and 2025-06-18: the initialize handshake, its signed session id (what the client
 * declared), and elicitation whose answer may reach another replica (the relay), on the SDK's
 * transport. A Response is the whole answer; `{ response }` is the transport's, which the caller
 * may still replace with the bearer challenge.
 */
export async function legacyExchange(
  c: McpContext,
  x: Exchange,
  request: globalThis.Request,
): Promise<globalThis.Response | { response: globalThis.Response }> {
  const { req } = x;
  const credentialId = req.caller!.credentialId;
  const message: unknown = req.body;
  const initialize = isInitialize(message) ? message : undefined;
  let session: McpSession | undefined;
  const sessionId = req.get('mcp-session-id');
  if (sessionId !== undefined && !initialize) {
    session = c.ids.read(sessionId);
    // Unknown, altered, or issued to another credential: not a session of this server (the spec's 404).
    if (!session || session.credentialId !== credentialId)
      return rpcAnswer(404, JSONRPC_SESSION_NOT_FOUND, 'Session not found: initialize a new one');
  }
  if (isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message)) return answer(c, credentialId, [message]);
  // A call that may ask the user is answered as a stream (the question goes out on it); every other as JSON.
  const asks = session?.elicitation === true && mayAsk(c, x, message);
  const s = mcpServer(c, x, session);
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: initialize
      ? () => c.ids.issue({ credentialId, elicitation: declaresElicitation(initialize) })
      : undefined,
    enableJsonResponse: !asks,
  });
  const release = asks ? c.relay.attach(transport, credentialId) : () => {};
  x.closing.push(() => {
    release();
    void transport.close();
    void s.close();
  });
  await s.connect(transport);
  const response = await transport.handleRequest(request, { authInfo: req.auth, parsedBody: req.body });
  return { response: asks ? await untilFirstEvent(response) : response };
}

/** Clients' answers to this server's requests (elicitation): handed to the process that waits for them. */
async function answer(c: McpContext, credentialId: string, answers: JSONRPCResponse[]): Promise<globalThis.Response> {
  const outcomes = await Promise.all(answers.map((a) => c.relay.deliver(credentialId, a)));
  if (outcomes.includes('unavailable')) {
    return rpcAnswer(
      503,
      ProtocolErrorCode.InternalError,
      'The answer could not be passed on (Redis, which carries it between replicas, is unavailable); the request it answers ends with nothing changed',
      { 'Retry-After': '2' },
    );
  }
  if (outcomes.includes('unknown'))
    return rpcAnswer(
      400,
      ProtocolErrorCode.InvalidRequest,
      "No request of this server awaits this answer: it was answered already, timed out, or is another client's",
    );
  return new globalThis.Response(null, { status: 202 });
}

/** Whether a message is a call of a task-level tool that may run a destructive action for this caller. */
function mayAsk(c: McpContext, x: Exchange, m: unknown): boolean {
  const { chosen, scopes } = x;
  if (!isObject(m) || m.method !== 'tools/call' || !isObject(m.params)) return false;
  const tool = c.o.taskTools.find(
    (t) => t.name === (m.params as Record<string, unknown>).name && chosen.toolsets.has(t.toolset),
  );
  return (
    tool !== undefined &&
    allowedActions(tool, (needed) => holds(scopes, needed), chosen.readOnly).some((a) => a.destructive)
  );
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
