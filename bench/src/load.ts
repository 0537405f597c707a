import autocannon from 'autocannon';
import { cpuMeter } from './cpu.js';

export interface LoadRequest {
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  headers?: Record<string, string>;
  body?: string;
  /**
   * Builds each request from this connection's context (e.g. a fresh Idempotency-Key, the
   * ETag the previous response returned); returns path/headers/body overrides.
   */
  setup?: (context: Record<string, any>) => {
    method?: LoadRequest['method'];
    path?: string;
    headers?: Record<string, string>;
    body?: string;
  };
  /** Sees each response body, to keep per-connection state such as the next If-Match. */
  onResponse?: (status: number, body: string, context: Record<string, any>) => void;
}

export interface LoadResult {
  requests: number;
  reqPerSec: number;
  p50: number;
  p95: number;
  p99: number;
  /** Non-2xx answers, socket errors and timeouts. */
  errors: number;
  /** CPU milliseconds per request of each metered group of processes, over the measured run. */
  cpuMsPerRequest: Record<string, number>;
}

export interface LoadOptions {
  connections: number;
  warmupSeconds: number;
  seconds: number;
  /** Groups of processes whose CPU time the measured run reports, per request (e.g. service, postgres). */
  meter?: Record<string, () => Array<number | undefined>>;
  /** Requests per second over all connections (autocannon's `overallRate`); unset: as fast as answered. */
  rate?: number;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  const idx = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[idx]!;
}

/** One autocannon run of `opts.seconds`, its latencies and the metered CPU read over it. */
async function once(baseUrl: string, req: LoadRequest, opts: Omit<LoadOptions, 'warmupSeconds'>): Promise<LoadResult> {
  const { connections, seconds, meter = {}, rate } = opts;
  const latencies: number[] = [];
  const meters = Object.entries(meter).map(([name, pids]) => [name, cpuMeter(pids)] as const);
  let finish!: (result: any) => void;
  let fail!: (err: unknown) => void;
  const done = new Promise<any>((resolve, reject) => {
    finish = resolve;
    fail = reject;
  });
  const instance = autocannon(
    {
      url: baseUrl,
      connections,
      duration: seconds,
      timeout: 10,
      ...(rate !== undefined ? { overallRate: rate } : {}),
      requests: [
        {
          method: req.method ?? 'GET',
          path: req.path,
          headers: { 'content-type': 'application/json', ...req.headers },
          ...(req.body !== undefined ? { body: req.body } : {}),
          setupRequest: (request: any, context: Record<string, any>) => {
            if (!req.setup) return request;
            const extra = req.setup(context);
            return {
              ...request,
              ...(extra.method ? { method: extra.method } : {}),
              ...(extra.path ? { path: extra.path } : {}),
              ...(extra.body !== undefined ? { body: extra.body } : {}),
              headers: { ...request.headers, ...extra.headers },
            };
          },
          ...(req.onResponse
            ? {
                onResponse: (status: number, body: string, context: Record<string, any>) =>
                  req.onResponse!(status, body, context),
              }
            : {}),
        },
      ],
    },
    (err: unknown, result: unknown) => (err ? fail(err) : finish(result)),
  );
  instance.on('response', (_client: unknown, _status: number, _bytes: number, responseTime: number) => {
    latencies.push(responseTime);
  });
  const result: any = await done;
  const total = Math.max(result.requests.total as number, 1);
  const cpuMsPerRequest = Object.fromEntries(meters.map(([name, used]) => [name, used() / total]));
  latencies.sort((a, b) => a - b);
  return {
    requests: result.requests.total,
    reqPerSec: result.requests.average,
    p50: percentile(latencies, 50),
    p95: percentile(latencies, 95),
    p99: percentile(latencies, 99),
    errors: result.non2xx + result.errors + result.timeouts,
    cpuMsPerRequest,
  };
}

/** Sends one request as the load would (same setup/onResponse, same per-connection context). */
export async function sendOnce(
  baseUrl: string,
  req: LoadRequest,
  context: Record<string, any>,
  signal?: AbortSignal,
): Promise<number> {
  const extra = req.setup?.(context) ?? {};
  const res = await fetch(`${baseUrl}${extra.path ?? req.path}`, {
    method: extra.method ?? req.method ?? 'GET',
    headers: { 'content-type': 'application/json', ...req.headers, ...extra.headers },
    ...((extra.body ?? req.body) !== undefined ? { body: extra.body ?? req.body } : {}),
    ...(signal ? { signal } : {}),
  });
  req.onResponse?.(res.status, await res.text(), context);
  return res.status;
}

/**
 * The warm-up: `connections` loops sending the request one after another until `seconds` have
 * passed, each then waiting for its last answer. autocannon ends a run by closing its connections
 * with requests in flight; the service and Postgres still run those to the end, so a warm-up ended
 * that way charges up to `connections` abandoned requests to the measured run's first second.
 */
async function warmUp(baseUrl: string, req: LoadRequest, opts: LoadOptions): Promise<void> {
  const started = Date.now();
  const deadline = started + opts.warmupSeconds * 1000;
  let sent = 0;
  const loop = async (): Promise<void> => {
    const context: Record<string, any> = {};
    while (Date.now() < deadline) {
      if (opts.rate !== undefined) {
        const at = started + (sent++ * 1000) / opts.rate;
        if (at >= deadline) return;
        await new Promise((resolve) => setTimeout(resolve, at - Date.now()));
      }
      await sendOnce(baseUrl, req, context, AbortSignal.timeout(10_000));
    }
  };
  // A refused or timed-out request ends its own loop (the others go on): the measured run reports such errors.
  await Promise.all(Array.from({ length: opts.connections }, () => loop().catch(() => {})));
}

/** A warm-up (discarded, ended by waiting for its answers), then the measured run. Latencies in milliseconds. */
export async function runLoad(baseUrl: string, req: LoadRequest, opts: LoadOptions): Promise<LoadResult> {
  if (opts.warmupSeconds > 0) await warmUp(baseUrl, req, opts);
  return once(baseUrl, req, opts);
}
