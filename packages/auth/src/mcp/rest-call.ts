/*
 * A tool call is the REST request it stands for, sent to this same process so it passes every
 * middleware a REST request passes (routes, validation, scopes, rate limits, request log).
 */
import { Agent, request as httpRequest } from 'node:http';
import type { Request } from 'express';
import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import { errors, type AppError } from '@app/http-errors';
import { INNER_CALL_HEADER } from './inner-calls.js';
import { toRequest, type ArgumentProblem, type GeneratedTool } from './tools.js';
import type { Exchange, McpContext, RestAnswer } from './context.js';

/** The MCP request's caller stopped being valid (revoked, disconnected, expired) during the request. */
class CallerGone extends ProtocolError {
  constructor() {
    super(
      ProtocolErrorCode.InvalidRequest,
      'The API key or access token was revoked or expired during this request: authenticate again (the next request is answered HTTP 401)',
    );
  }
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
function sendToSelf(
  req: Request,
  method: string,
  url: string,
  headers: Record<string, string>,
  body: string | undefined,
): Promise<{ status: number; payload: string }> {
  return new Promise((resolve, reject) => {
    const out = httpRequest(
      {
        agent: loopback,
        host: req.socket.localAddress,
        port: req.socket.localPort,
        method,
        path: url,
        headers: {
          ...headers,
          'x-forwarded-for': req.ip ?? '',
          ...(body === undefined ? {} : { 'content-length': String(Buffer.byteLength(body)) }),
        },
      },
      (answer) => {
        const chunks: Buffer[] = [];
        answer.on('data', (c: Buffer) => chunks.push(c));
        answer.on('end', () =>
          resolve({ status: answer.statusCode ?? 502, payload: Buffer.concat(chunks).toString('utf8') }),
        );
        answer.on('error', reject);
      },
    );
    out.on('error', reject);
    out.end(body);
  });
}

/** A tool's bad arguments, as the REST validation error naming each field. */
export function invalidArguments(problems: ArgumentProblem[]): AppError {
  return errors.validation(
    problems,
    `Invalid arguments: ${problems.map((p) => `${p.path.slice(1)} ${p.message}`).join('; ')}`,
  );
}

function withoutKeys(value: unknown, keys: ReadonlySet<string>): unknown {
  if (Array.isArray(value)) return value.map((v) => withoutKeys(v, keys));
  if (!value || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([k]) => !keys.has(k))
      .map(([k, v]) => [k, withoutKeys(v, keys)]),
  );
}

/** Sends a tool's REST request into the app, as the MCP request's caller and client address. */
export async function callRest(
  c: McpContext,
  x: Exchange,
  tool: GeneratedTool,
  args: Record<string, unknown>,
): Promise<RestAnswer | { problems: ArgumentProblem[] }> {
  const { req } = x;
  const built = toRequest(tool, args);
  if (!built.ok) return { problems: built.problems };
  // The MCP request's id, so its log line and its tool calls' lines share it.
  const headers: Record<string, string> = {
    accept: 'application/json',
    'x-request-id': req.id,
    [INNER_CALL_HEADER]: x.ticket,
    ...built.headers,
  };
  for (const name of FORWARDED) {
    const value = req.headers[name];
    if (typeof value === 'string') headers[name] = value;
  }
  if (built.body !== undefined) headers['content-type'] = 'application/json';
  const answer = await sendToSelf(
    req,
    tool.route.method,
    built.url,
    headers,
    built.body === undefined ? undefined : JSON.stringify(built.body),
  );
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
  const shown = c.redact.size > 0 ? withoutKeys(body, c.redact) : body;
  return { status: answer.status, body: c.o.present ? c.o.present(shown) : shown };
}
