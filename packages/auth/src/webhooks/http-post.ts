import { Agent as HttpAgent, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { TargetRefusedError, literalAddressProblem, refusingLookup, type Resolve } from './target.js';

/**
 * Connections to receivers are kept alive: a busy subscription sends one event after another.
 * (WEBHOOK_ALLOW_PRIVATE is the process's, so every pooled socket was opened under the same rule.)
 */
const agents = {
  http: new HttpAgent({ keepAlive: true, maxSockets: 64 }),
  https: new HttpsAgent({ keepAlive: true, maxSockets: 64 }),
};
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
 * Sends one request under the target rules and hands its answer to `onResponse`: a refused target
 * (TargetRefusedError), a connection failure, or no complete answer within `timeoutMs` (an Error
 * named TimeoutError) rejects. Redirects are not followed (node:http never does).
 */
function guardedRequest<T>(
  method: 'GET' | 'POST',
  url: string,
  headers: Record<string, string>,
  body: string | undefined,
  timeoutMs: number,
  o: PostOptions,
  onResponse: (res: IncomingMessage, resolve: (value: T) => void, reject: (err: Error) => void) => void,
): Promise<T> {
  const target = new URL(url);
  const https = target.protocol === 'https:';
  const literal = o.allowPrivate ? undefined : literalAddressProblem(target.hostname);
  if (literal) return Promise.reject(new TargetRefusedError(`${target.hostname} ${literal}`));
  // Each new connection's address is the one the lookup checked. A resolver of the caller's own
  // (tests) gets a connection of its own, so no pooled socket stands in for its check.
  const lookup = o.allowPrivate ? undefined : o.resolve ? refusingLookup(o.resolve) : systemLookup;
  const agent = o.resolve ? false : https ? agents.https : agents.http;
  return new Promise((resolve, reject) => {
    // Settles at once, whether or not the answer had begun, and drops the connection (destroyed
    // without the error: once the answer has begun its socket would emit it with no one listening).
    const fail = (err: Error) => {
      reject(err);
      req.destroy();
    };
    const req = (https ? httpsRequest : httpRequest)(
      target,
      {
        method,
        agent,
        lookup,
        headers: body === undefined ? headers : { ...headers, 'content-length': Buffer.byteLength(body) },
      },
      (res) => onResponse(res, resolve, fail),
    );
    // Added by the instrumentation as the request was made; headers are only sent at end().
    if (!o.traceContext) for (const name of TRACE_HEADERS) req.removeHeader(name);
    const timer = setTimeout(() => fail(Object.assign(new Error('timeout'), { name: 'TimeoutError' })), timeoutMs);
    req.on('close', () => clearTimeout(timer));
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * POSTs `body` and resolves with the status, or rejects as {@link guardedRequest} does; the
 * answer's body is read and dropped.
 */
export function postJson(
  url: string,
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
  o: PostOptions,
): Promise<number> {
  return guardedRequest('POST', url, headers, body, timeoutMs, o, (res, resolve, reject) => {
    res.resume();
    res.on('end', () => resolve(res.statusCode ?? 0));
    res.on('error', reject);
  });
}

/** A GET's answer: its status, headers and whole body. */
export interface BoundedAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/**
 * GETs `url` under the same rules as {@link postJson}, reading at most `maxBytes` of its body: a
 * longer one rejects with an Error named TooLargeError as soon as it is known to be longer.
 */
export function getBounded(
  url: string,
  headers: Record<string, string>,
  maxBytes: number,
  timeoutMs: number,
  o: PostOptions,
): Promise<BoundedAnswer> {
  return guardedRequest('GET', url, headers, undefined, timeoutMs, o, (res, resolve, reject) => {
    const tooLarge = () => reject(Object.assign(new Error(`larger than ${maxBytes} bytes`), { name: 'TooLargeError' }));
    if (Number(res.headers['content-length'] ?? 0) > maxBytes) return tooLarge();
    const chunks: Buffer[] = [];
    let size = 0;
    res.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) tooLarge();
      else chunks.push(chunk);
    });
    res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    res.on('error', reject);
  });
}
