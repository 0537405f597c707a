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

/** One autocannon run of `opts.seconds` (latencies kept when `record`, the metered CPU read over it). */
async function once(
  baseUrl: string,
  req: LoadRequest,
  opts: Omit<LoadOptions, 'warmupSeconds'>,
  record: boolean,
): Promise<LoadResult> {
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
  if (record) {
    instance.on('response', (_client: unknown, _status: number, _bytes: number, responseTime: number) => {
      latencies.push(responseTime);
    });
  }
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

/** A warm-up run (discarded), then the measured run. Latencies in milliseconds. */
export async function runLoad(baseUrl: string, req: LoadRequest, opts: LoadOptions): Promise<LoadResult> {
  if (opts.warmupSeconds > 0) await once(baseUrl, req, { ...opts, seconds: opts.warmupSeconds, meter: {} }, false);
  return once(baseUrl, req, opts, true);
}
