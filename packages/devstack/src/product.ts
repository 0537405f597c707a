import type { ChildProcess } from 'node:child_process';
import { startNginx, repoRoot, upstreams, type GatewayVars, type RunningNginx } from './nginx.js';
import { freePort, waitForPort } from './ports.js';
import { spawnService } from './processes.js';
import { serviceEntry } from './service-entry.js';
import { SERVICES, type Service } from './services.generated.js';
import { Supervised } from './supervisor.js';

export { DEFAULT_PORTS, SERVICES, type Service } from './services.generated.js';
/** Instance i (from 0) of a service listens on the service's port + REPLICA_PORT_STEP * i. */
export const REPLICA_PORT_STEP = 10;
export const MAX_REPLICAS = 8;

/** A process of a service started on its own, with the port it listens on. */
interface ServiceProcess {
  child: ChildProcess;
  port: number;
}

/**
 * One more process of a service beside a running product, on the same database: e.g. a webhook
 * worker (`SERVICE_ROLE: 'worker'` in `env`, with DATABASE_URL and the rest of its settings). It
 * listens on a free port; resolved once it does. Not supervised: the caller stops or kills it.
 */
export async function startServiceProcess(
  service: Service,
  name: string,
  env: Record<string, string | undefined>,
): Promise<ServiceProcess> {
  const port = await freePort();
  const child = spawnService(name, process.execPath, serviceEntry(service, 'serve'), {
    cwd: repoRoot,
    env: { ...process.env, ...env, [`${service.toUpperCase()}_PORT`]: String(port) },
  });
  await waitForPort(port, 60_000);
  return { child, port };
}

export interface ProductOptions {
  databaseUrl: string;
  redisUrl?: string | undefined;
  /** Instances of each service (1 to 8; more than one needs `redisUrl`). Default 1. */
  replicas?: number;
  /** Fixed ports of each service's first instance; any service left out gets free ports. */
  ports?: Partial<Record<Service, number>>;
  /** The gateway's port; a free one when left out. */
  gatewayPort?: number;
  /** false: no nginx in front (`npm start -- --no-gateway`). Default true. */
  gateway?: boolean;
  /** nginx's prefix directory (config, temp files, pid). */
  nginxDir: string;
  /** Settings for every service, then per service. */
  env?: Record<string, string>;
  serviceEnv?: Partial<Record<Service, Record<string, string>>>;
  /** Gateway settings beyond the upstreams (the benchmark lifts the meetings guard). */
  gatewayVars?: Pick<
    GatewayVars,
    | 'GATEWAY_HOST'
    | 'MEETINGS_GUARD_RATE'
    | 'MEETINGS_GUARD_BURST'
    | 'MCP_GUARD_RATE'
    | 'MCP_GUARD_BURST'
    | 'TRUSTED_PROXIES'
  >;
  /**
   * Restart a service process or nginx that exits on its own (backoff 1 s to 30 s), logging one
   * line through `log`. `npm start` turns it on; tests that watch a process exit leave it off.
   */
  supervise?: { log(line: string): void };
  /** Called when a service exits on its own (not through stop()) and is not supervised. */
  onExit?: (service: Service, code: number | null) => void;
}

/** One running instance of a service. */
export interface Instance {
  service: Service;
  /** `tasks`, or `tasks#2` when there are replicas: the prefix of its log lines. */
  name: string;
  port: number;
  /** The current process; a new one after each supervised restart. */
  readonly process: ChildProcess;
  /** Supervised restarts so far. */
  readonly restarts: number;
  /** Starts the instance again after it exited unsupervised (a kill); resolves once it listens. */
  startAgain(): Promise<void>;
}

export interface RunningProduct {
  /** Each service's first instance's port. */
  ports: Record<Service, number>;
  /** Each service's first instance's process. */
  children: Record<Service, ChildProcess>;
  instances: Record<Service, Instance[]>;
  /** The gateway's URL, or undefined when nginx is not installed or `gateway` is false. */
  gateway: string | undefined;
  /** Stops every instance of a service for good (no restart). */
  stopService(service: Service): Promise<void>;
  /** Gateway first, then the services (each drains its in-flight requests). */
  stop(): Promise<void>;
}

async function instancePorts(opts: ProductOptions, replicas: number): Promise<Record<Service, number[]>> {
  const ports = {} as Record<Service, number[]>;
  for (const svc of SERVICES) {
    const base = opts.ports?.[svc];
    ports[svc] = [];
    for (let i = 0; i < replicas; i++)
      ports[svc].push(base === undefined ? await freePort() : base + REPLICA_PORT_STEP * i);
  }
  const all = SERVICES.flatMap((svc) => ports[svc]);
  const clash = all.find((port, i) => all.indexOf(port) !== i || port > 65535);
  if (clash !== undefined) {
    throw new Error(
      `port ${clash} would serve two instances or is past 65535 (instance i of a service listens on its port + ${REPLICA_PORT_STEP} x i)`,
    );
  }
  return ports;
}

/**
 * The three built services as processes (the shared entry's `serve`) on one database, N
 * instances of each, and nginx in front of them rendered from the gateway template with every
 * instance as an upstream server. Used by `npm start`, the gateway tests and the benchmark, so
 * all of them run the product the same way.
 */
export async function startProduct(opts: ProductOptions): Promise<RunningProduct> {
  const replicas = opts.replicas ?? 1;
  if (!Number.isInteger(replicas) || replicas < 1 || replicas > MAX_REPLICAS)
    throw new Error(`replicas must be 1 to ${MAX_REPLICAS}, got ${replicas}`);
  if (replicas > 1 && !opts.redisUrl)
    throw new Error('more than one instance needs Redis (shared rate limits and idempotency records)');
  const ports = await instancePorts(opts, replicas);
  const instances = {} as Record<Service, Instance[]>;
  const supervised: Supervised[] = [];
  // Exits during start-up fail startProduct; the supervisor only takes over once all listen.
  let started = false;
  let startFailure: ((err: Error) => void) | undefined;
  const failed = new Promise<never>((_, reject) => (startFailure = reject));
  failed.catch(() => {});

  const launch = (svc: Service, i: number): Instance => {
    const port = ports[svc][i]!;
    const name = replicas === 1 ? svc : `${svc}#${i + 1}`;
    const env = {
      ...process.env,
      DATABASE_URL: opts.databaseUrl,
      ...(opts.redisUrl ? { REDIS_URL: opts.redisUrl } : {}),
      [`${svc.toUpperCase()}_PORT`]: String(port),
      ...opts.env,
      ...opts.serviceEnv?.[svc],
    };
    const proc = new Supervised(name, {
      spawn: () => spawnService(name, process.execPath, serviceEntry(svc, 'serve'), { cwd: repoRoot, env }),
      ready: () => waitForPort(port, 60000),
      onExit: (code) => {
        if (!started) startFailure?.(new Error(`${name} exited with code ${code} while starting`));
        else opts.onExit?.(svc, code);
      },
    });
    supervised.push(proc);
    return {
      service: svc,
      name,
      port,
      get process() {
        return proc.process;
      },
      get restarts() {
        return proc.restarts;
      },
      startAgain: () => proc.startAgain(),
    };
  };
  const stopAllServices = (graceMs?: number) => Promise.all(supervised.map((s) => s.stop(graceMs)));
  // A process that exits fails the start at once (`failed`); one still starting gets 90 s, since on
  // a loaded 2-core machine (a whole test run beside other work) its migrations took over 30 s.
  const listening = (wave: Instance[]) =>
    Promise.race([Promise.all(wave.map((instance) => waitForPort(instance.port, 90_000))), failed]);

  let nginx: RunningNginx | undefined;
  try {
    // The first instance of each service migrates its schema; the others start once it is done,
    // so no two processes race to create the same schema.
    for (const svc of SERVICES) instances[svc] = [launch(svc, 0)];
    await listening(SERVICES.map((svc) => instances[svc][0]!));
    const rest = SERVICES.flatMap((svc) => ports[svc].slice(1).map((_, i) => launch(svc, i + 1)));
    for (const instance of rest) instances[instance.service].push(instance);
    await listening(rest);
    const upstream = (svc: Service) => ports[svc].map((port) => `127.0.0.1:${port}`).join(',');
    if (opts.gateway !== false) {
      nginx = await startNginx(opts.nginxDir, {
        GATEWAY_PORT: opts.gatewayPort ?? (await freePort()),
        ...upstreams(upstream),
        ...opts.gatewayVars,
      });
    }
  } catch (err) {
    await stopAllServices();
    throw err;
  }
  started = true;
  if (opts.supervise) {
    for (const s of supervised) s.supervise(opts.supervise);
    nginx?.supervise(opts.supervise);
  }

  return {
    ports: Object.fromEntries(SERVICES.map((svc) => [svc, ports[svc][0]])) as Record<Service, number>,
    get children() {
      return Object.fromEntries(SERVICES.map((svc) => [svc, instances[svc][0]!.process])) as Record<
        Service,
        ChildProcess
      >;
    },
    instances,
    gateway: nginx?.url,
    stopService: async (svc) => {
      await Promise.all(supervised.filter((s) => s.name === svc || s.name.startsWith(`${svc}#`)).map((s) => s.stop()));
    },
    async stop() {
      await nginx?.stop();
      await stopAllServices(12000);
    },
  };
}
