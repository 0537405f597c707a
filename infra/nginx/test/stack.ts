import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  adminCommand,
  adminCommandWithStdin,
  SERVICES,
  createDatabase,
  dropDatabase,
  freePort,
  repoRoot,
  startProduct,
  type Instance,
  type ProductOptions,
  type Service,
} from '@app/devstack';

export { SERVICES, type Service };

/**
 * What the gateway suites read of a service's declaration (`apps/<svc>/src/service.ts`, the
 * `ServiceDeclaration` of @app/auth/runtime, built): the suites list and try services from it,
 * so a service made by `npm run new-service` is in every one of them.
 */
interface Declared {
  name: Service;
  title: string;
  port: number;
  envelope: 'rich' | 'simple';
  scopes: readonly string[];
  paths: {
    api: string;
    home?: string;
    families: readonly string[];
    streams: readonly string[];
    keys: string;
    webhooks: string;
  };
  limits: {
    bodyLimitBytes: number;
    rateLimits: ReadonlyArray<{ name: string; variable: string; perMinute: number }>;
    networkCap?: { variable: string; perMinute: number };
  };
  events: Readonly<Record<string, string>>;
  roles: readonly ('api' | 'worker')[];
  toolsets: readonly string[];
}

/** `service`'s declaration, from its build (`apps/<svc>/dist/service.js`). */
export function declared(service: Service): Declared {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- the declarations are CommonJS builds, found at run time
  return (require(join(repoRoot, 'apps', service, 'dist', 'service.js')) as { default: Declared }).default;
}

/** Every service's declaration, in the order of their ports. */
export const DECLARED: readonly Declared[] = SERVICES.map(declared);

/** The scopes of a key that may only read `service`: its declaration's `:read` scopes. */
export function readScopes(service: Service): string[] {
  return declared(service).scopes.filter((scope) => scope.endsWith(':read'));
}

/** The path `npm start` prints for a service: its main list (its first family when it names none). */
export const homePath = (service: Service): string =>
  declared(service).paths.home ?? declared(service).paths.families[0]!;

/** One environment for every service that sets every per-account limit and network cap the declarations name to `perMinute`. */
export function allLimitsAt(perMinute: number): Record<string, string> {
  const variables = DECLARED.flatMap(({ limits }) => [
    ...limits.rateLimits.map((limit) => limit.variable),
    ...(limits.networkCap ? [limits.networkCap.variable] : []),
  ]);
  return Object.fromEntries(variables.map((variable) => [variable, String(perMinute)]));
}

/**
 * Environment for every service that sets each of its per-account rate limits (the variables its
 * declaration names) to `perMinute`, its network-level cap too when `networkCap`; `extra` is
 * merged in per service.
 */
export function everyRateLimitAt(
  perMinute: number,
  {
    networkCap = false,
    extra = {},
  }: { networkCap?: boolean; extra?: Partial<Record<Service, Record<string, string>>> } = {},
): Partial<Record<Service, Record<string, string>>> {
  return Object.fromEntries(
    DECLARED.map(({ name, limits }) => {
      const variables = [
        ...limits.rateLimits.map((limit) => limit.variable),
        ...(networkCap && limits.networkCap ? [limits.networkCap.variable] : []),
      ];
      return [
        name,
        { ...Object.fromEntries(variables.map((variable) => [variable, String(perMinute)])), ...extra[name] },
      ];
    }),
  );
}

/**
 * One request per path family of `service`: its main list when the family holds it, else the
 * shortest path of its OpenAPI document under the family with no path parameter; by its first
 * documented method (GET when it has one).
 */
export function familyRequests(service: Service): Array<{ family: string; path: string; method: string }> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- the documents are CommonJS builds, found at run time
  const built = require(join(repoRoot, 'apps', service, 'dist', 'openapi.js')) as {
    openapiDocument: { paths: Record<string, Record<string, unknown>> };
  };
  const document = built.openapiDocument as { paths: Record<string, Record<string, { security?: unknown[] }>> };
  const paths = Object.keys(document.paths).filter((path) => !path.includes('{'));
  // A family whose every operation is open (`security: []`, meetings' calendar feed: its address
  // is the secret) has no key to refuse; its own suites show it routed.
  const open = (family: string) =>
    Object.entries(document.paths)
      .filter(([p]) => p.startsWith(`${family}/`))
      .every(([, ops]) => Object.values(ops).every((o) => Array.isArray(o.security) && o.security.length === 0));
  return declared(service)
    .paths.families.filter((family) => !open(family))
    .map((family) => {
      const under = paths.filter((p) => p === family || p.startsWith(`${family}/`)).sort((a, b) => a.length - b.length);
      const path = under.find((p) => p === declared(service).paths.home) ?? under[0];
      if (!path) throw new Error(`${service}: its document has no path under ${family} without a parameter`);
      const methods = Object.keys(document.paths[path]!).filter((m) =>
        ['get', 'post', 'put', 'patch', 'delete'].includes(m),
      );
      return { family, path, method: (methods.includes('get') ? 'get' : methods[0]!).toUpperCase() };
    });
}

export interface Stack {
  gateway: string;
  /** The services' own addresses (their first instance's), bypassing the gateway. */
  ports: Record<Service, number>;
  /** Every instance of each service. */
  instances: Record<Service, Instance[]>;
  databaseUrl: string;
  /** The gateway's JSON access log (one line per request). */
  accessLog: string;
  /** A service's process, e.g. to signal it. */
  process(service: Service): ChildProcess;
  /** `npm run admin -- <service> ...`: the function it runs, in the test's process (`adminCommand`). */
  admin(service: Service, ...argv: string[]): Promise<Record<string, any>>;
  /** The same with `stdin` piped to its standard input (a password). */
  adminWithStdin(service: Service, stdin: string, ...argv: string[]): Promise<Record<string, any>>;
  /** Stops one service, as if it had crashed. */
  stopService(service: Service): Promise<void>;
  stop(): Promise<void>;
}

export interface StackOptions {
  /** Instances of each service (default 1). */
  replicas?: number;
  /** Restart a process that exits, as `npm start` does; its log lines go to `log`. */
  supervise?: { log(line: string): void };
  /** Gateway settings (TRUSTED_PROXIES: a TLS terminator in front of it). */
  gatewayVars?: ProductOptions['gatewayVars'];
  /** A Redis of the test's own (one it may stop), in place of the suite's. */
  redisUrl?: string;
}

/**
 * How long a suite's beforeAll may take to start a stack (each service's migrations and first
 * listen, nginx, the accounts it makes): minutes, not seconds, on a loaded 2-core machine with a
 * fourth service (the new-service test's copy).
 */
export const STACK_START_MS = 180_000;

/**
 * The three built services as real processes on one fresh database and the test Redis, with
 * real nginx in front of them, exactly as `npm start` runs them. `env` adds per-service settings.
 */
export async function startStack(
  env: Partial<Record<Service, Record<string, string>>> = {},
  options: StackOptions = {},
): Promise<Stack> {
  const adminUrl = process.env.TEST_DATABASE_URL!;
  const name = `gateway_test_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  const databaseUrl = await createDatabase(adminUrl, name);
  const nginxDir = mkdtempSync(join(tmpdir(), 'gateway-'));
  const gatewayPort = await freePort();
  const product = await startProduct({
    databaseUrl,
    redisUrl: process.env.TEST_REDIS_URL,
    nginxDir,
    gatewayPort,
    ...options,
    // As `npm start` does: pages served by the gateway may use their session.
    env: {
      HOST: '127.0.0.1',
      LOG_LEVEL: 'error',
      ALLOWED_ORIGINS: `http://127.0.0.1:${gatewayPort},http://localhost:${gatewayPort}`,
    },
    serviceEnv: Object.fromEntries(SERVICES.map((svc) => [svc, { REDIS_PREFIX: `${name}:${svc}:`, ...env[svc] }])),
  });
  if (!product.gateway) {
    await product.stop();
    throw new Error('nginx is not installed: apt-get install -y nginx-light');
  }
  return {
    gateway: product.gateway,
    ports: product.ports,
    instances: product.instances,
    databaseUrl,
    accessLog: join(nginxDir, 'logs', 'access.log'),
    process: (service) => product.children[service],
    admin: (service, ...argv) => adminCommand(service, databaseUrl, ...argv),
    adminWithStdin: (service, stdin, ...argv) => adminCommandWithStdin(service, databaseUrl, stdin, ...argv),
    stopService: (service) => product.stopService(service),
    async stop() {
      await product.stop();
      rmSync(nginxDir, { recursive: true, force: true });
      await dropDatabase(adminUrl, name);
    },
  };
}
