import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';

/** Connections to receivers are kept alive: a busy subscription sends one event after another. */
const agents = { http: new HttpAgent({ keepAlive: true, maxSockets: 64 }), https: new HttpsAgent({ keepAlive: true, maxSockets: 64 }) };

/**
 * POSTs `body` and resolves with the status, or rejects on a connection failure or when no
 * answer came within `timeoutMs` (an Error named TimeoutError). Redirects are not followed
 * (node:http never does); the answer's body is read and dropped.
 */
export function postJson(url: string, headers: Record<string, string>, body: string, timeoutMs: number): Promise<number> {
  const target = new URL(url);
  const https = target.protocol === 'https:';
  return new Promise((resolve, reject) => {
    const req = (https ? httpsRequest : httpRequest)(target, {
      method: 'POST',
      agent: https ? agents.https : agents.http,
      headers: { ...headers, 'content-length': Buffer.byteLength(body) },
    }, (res: IncomingMessage) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', reject);
    });
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
