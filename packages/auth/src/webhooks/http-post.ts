import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { TargetRefusedError, literalAddressProblem, refusingLookup, type Resolve } from './target.js';

/**
 * Connections to receivers are kept alive: a busy subscription sends one event after another.
 * (WEBHOOK_ALLOW_PRIVATE is the process's, so every pooled socket was opened under the same rule.)
 */
const agents = { http: new HttpAgent({ keepAlive: true, maxSockets: 64 }), https: new HttpsAgent({ keepAlive: true, maxSockets: 64 }) };
const systemLookup = refusingLookup();

export interface PostOptions {
  /** Allow private, loopback and link-local targets (WEBHOOK_ALLOW_PRIVATE=1). */
  allowPrivate: boolean;
  /** The resolver the connect-time check uses (the system's by default). */
  resolve?: Resolve;
  /**
   * Keep the W3C trace headers the HTTP instrumentation adds (WEBHOOK_TRACE_CONTEXT=1); by
   * default a receiver learns nothing of our traces.
   */
  traceContext?: boolean;
}

const TRACE_HEADERS = ['traceparent', 'tracestate', 'baggage'];

/**
 * POSTs `body` and resolves with the status, or rejects on a connection failure, a refused target
 * (TargetRefusedError) or when no answer came within `timeoutMs` (an Error named TimeoutError).
 * Redirects are not followed (node:http never does); the answer's body is read and dropped.
 */
export function postJson(url: string, headers: Record<string, string>, body: string, timeoutMs: number, o: PostOptions): Promise<number> {
  const target = new URL(url);
  const https = target.protocol === 'https:';
  const literal = o.allowPrivate ? undefined : literalAddressProblem(target.hostname);
  if (literal) return Promise.reject(new TargetRefusedError(`${target.hostname} ${literal}`));
  // Each new connection's address is the one the lookup checked. A resolver of the caller's own
  // (tests) gets a connection of its own, so no pooled socket stands in for its check.
  const lookup = o.allowPrivate ? undefined : o.resolve ? refusingLookup(o.resolve) : systemLookup;
  const agent = o.resolve ? false : https ? agents.https : agents.http;
  return new Promise((resolve, reject) => {
    const req = (https ? httpsRequest : httpRequest)(target, {
      method: 'POST',
      agent,
      lookup,
      headers: { ...headers, 'content-length': Buffer.byteLength(body) },
    }, (res: IncomingMessage) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', reject);
    });
    // Added by the instrumentation as the request was made; headers are only sent at end().
    if (!o.traceContext) for (const name of TRACE_HEADERS) req.removeHeader(name);
    const timer = setTimeout(() => {
      const err = new Error('timeout');
      err.name = 'TimeoutError';
      req.destroy(err);
    }, timeoutMs);
    req.on('close', () => clearTimeout(timer));
    req.on('error', reject);
    req.end(body);
  });
}
