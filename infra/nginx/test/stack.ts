import { execFile, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createDatabase, dropDatabase, freePort, repoRoot, spawnService, startNginx, stopChild, waitForPort, type RunningNginx } from '@app/devstack';

const run = promisify(execFile);
export const SERVICES = ['tasks', 'meetings', 'clipboard'] as const;
export type Service = (typeof SERVICES)[number];

export interface Stack {
  gateway: string;
  ports: Record<Service, number>;
  /** `npm run admin -- <service> ...` as operators run it (the app's own admin entry). */
  admin(service: Service, ...argv: string[]): Promise<Record<string, any>>;
  /** Stops one service, as if it had crashed. */
  stopService(service: Service): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The three built services as real processes on one fresh database and Redis, and real nginx in
 * front of them rendered from templates/gateway.conf.template. `env` adds per-service settings.
 */
export async function startStack(env: Partial<Record<Service, Record<string, string>>> = {}): Promise<Stack> {
  const adminUrl = process.env.TEST_DATABASE_URL!;
  const name = `gateway_test_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  const databaseUrl = await createDatabase(adminUrl, name);
  const ports = {} as Record<Service, number>;
  const children = {} as Record<Service, ChildProcess>;
  for (const svc of SERVICES) {
    ports[svc] = await freePort();
    children[svc] = spawnService(svc, process.execPath, [join(repoRoot, 'apps', svc, 'dist', 'server.js')], {
      env: {
        ...process.env,
        DATABASE_URL: databaseUrl,
        REDIS_URL: process.env.TEST_REDIS_URL,
        REDIS_PREFIX: `${name}:${svc}:`,
        [`${svc.toUpperCase()}_PORT`]: String(ports[svc]),
        HOST: '127.0.0.1',
        LOG_LEVEL: 'error',
        ...env[svc],
      },
    });
  }
  await Promise.all(SERVICES.map((svc) => waitForPort(ports[svc], 30000)));
  const nginxDir = mkdtempSync(join(tmpdir(), 'gateway-'));
  const gatewayPort = await freePort();
  const nginx: RunningNginx | undefined = await startNginx(nginxDir, {
    GATEWAY_PORT: gatewayPort,
    TASKS_UPSTREAM: `127.0.0.1:${ports.tasks}`,
    MEETINGS_UPSTREAM: `127.0.0.1:${ports.meetings}`,
    CLIPBOARD_UPSTREAM: `127.0.0.1:${ports.clipboard}`,
  });
  if (!nginx) throw new Error('nginx is not installed: apt-get install -y nginx-light');

  return {
    gateway: nginx.url,
    ports,
    async admin(service, ...argv) {
      const { stdout } = await run(process.execPath, [join(repoRoot, 'apps', service, 'dist', 'admin.js'), ...argv], {
        env: { ...process.env, DATABASE_URL: databaseUrl },
      });
      return JSON.parse(stdout) as Record<string, any>;
    },
    stopService: (service) => stopChild(children[service]),
    async stop() {
      await nginx.stop();
      await Promise.all(SERVICES.map((svc) => stopChild(children[svc])));
      rmSync(nginxDir, { recursive: true, force: true });
      await dropDatabase(adminUrl, name);
    },
  };
}
