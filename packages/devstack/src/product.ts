import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { startNginx, repoRoot, type GatewayVars, type RunningNginx } from './nginx.js';
import { freePort, waitForPort } from './ports.js';
import { spawnService, stopChild } from './processes.js';

export const SERVICES = ['tasks', 'meetings', 'clipboard'] as const;
export type Service = (typeof SERVICES)[number];
export const DEFAULT_PORTS: Record<Service, number> = { tasks: 3001, meetings: 3002, clipboard: 3003 };

export interface ProductOptions {
  databaseUrl: string;
  redisUrl?: string | undefined;
  /** Fixed ports; any service left out gets a free port. */
  ports?: Partial<Record<Service, number>>;
  /** The gateway's port; a free one when left out. */
  gatewayPort?: number;
  /** nginx's prefix directory (config, temp files, pid). */
  nginxDir: string;
  /** Settings for every service, then per service. */
  env?: Record<string, string>;
  serviceEnv?: Partial<Record<Service, Record<string, string>>>;
  /** Gateway settings beyond the upstreams (the benchmark lifts the meetings cap). */
  gatewayVars?: Pick<GatewayVars, 'MEETINGS_CAP_RATE' | 'MEETINGS_CAP_BURST'>;
  /** Called when a service exits on its own (not through stop()). */
  onExit?: (service: Service, code: number | null) => void;
}

export interface RunningProduct {
  ports: Record<Service, number>;
  children: Record<Service, ChildProcess>;
  /** The gateway's URL, or undefined when nginx is not installed. */
  gateway: string | undefined;
  stopService(service: Service): Promise<void>;
  /** Gateway first, then the services (each drains its in-flight requests). */
  stop(): Promise<void>;
}

/**
 * The three built services as processes (`apps/<service>/dist/server.js`) on one database, and
 * nginx in front of them rendered from the gateway template. Used by `npm start`, the gateway
 * tests and the benchmark, so all three run the product the same way.
 */
export async function startProduct(opts: ProductOptions): Promise<RunningProduct> {
  const ports = {} as Record<Service, number>;
  const children = {} as Record<Service, ChildProcess>;
  let stopping = false;
  for (const svc of SERVICES) {
    ports[svc] = opts.ports?.[svc] ?? (await freePort());
    const child = spawnService(svc, process.execPath, [join(repoRoot, 'apps', svc, 'dist', 'server.js')], {
      cwd: repoRoot,
      env: {
        ...process.env,
        DATABASE_URL: opts.databaseUrl,
        ...(opts.redisUrl ? { REDIS_URL: opts.redisUrl } : {}),
        [`${svc.toUpperCase()}_PORT`]: String(ports[svc]),
        ...opts.env,
        ...opts.serviceEnv?.[svc],
      },
    });
    child.once('exit', (code) => {
      if (!stopping) opts.onExit?.(svc, code);
    });
    children[svc] = child;
  }
  // A service that exits while starting (bad configuration, migration failure) fails at once.
  const exited = (svc: Service) =>
    new Promise<never>((_, reject) => children[svc].once('exit', (code) => reject(new Error(`${svc} exited with code ${code} while starting`))));
  try {
    await Promise.race([Promise.all(SERVICES.map((svc) => waitForPort(ports[svc], 30000))), ...SERVICES.map(exited)]);
  } catch (err) {
    stopping = true;
    await Promise.all(SERVICES.map((svc) => stopChild(children[svc])));
    throw err;
  }
  let nginx: RunningNginx | undefined;
  try {
    nginx = await startNginx(opts.nginxDir, {
      GATEWAY_PORT: opts.gatewayPort ?? (await freePort()),
      TASKS_UPSTREAM: `127.0.0.1:${ports.tasks}`,
      MEETINGS_UPSTREAM: `127.0.0.1:${ports.meetings}`,
      CLIPBOARD_UPSTREAM: `127.0.0.1:${ports.clipboard}`,
      ...opts.gatewayVars,
    });
  } catch (err) {
    stopping = true;
    await Promise.all(SERVICES.map((svc) => stopChild(children[svc])));
    throw err;
  }
  return {
    ports,
    children,
    gateway: nginx?.url,
    stopService: (svc) => stopChild(children[svc]),
    async stop() {
      stopping = true;
      await nginx?.stop();
      await Promise.all(SERVICES.map((svc) => stopChild(children[svc], 12000)));
    },
  };
}
