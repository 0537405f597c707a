import { isIP } from 'node:net';
import { join } from 'node:path';
import pg from 'pg';
import { startEmbeddedPostgres, type RunningPostgres } from './postgres.js';
import { canListen, freePort, portHolder, waitForPort } from './ports.js';
import { findExecutable, startRedis, systemPackages, type RunningRedis } from './processes.js';
import {
  DEFAULT_PORTS,
  MAX_REPLICAS,
  REPLICA_PORT_STEP,
  SERVICES,
  startProduct,
  type RunningProduct,
} from './product.js';
import { clearRuntime, dataDir, writeRuntime } from './runtime.js';
import { HOME_PATHS } from './services.generated.js';

/** Meetings' OAuth Client ID Metadata Document (apps/meetings/src/domain/connections.service.ts), which tasks fetches. */
const MEETINGS_CLIENT_DOCUMENT = '/api/me/connections/tasks/client.json';

function portFrom(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    process.stderr.write(`${name} must be a port number, got "${raw}"\n`);
    process.exit(1);
  }
  return port;
}

/**
 * GATEWAY_HOST: the address npm start's gateway listens on, 127.0.0.1 (this machine only) unless
 * set; an IP address (0.0.0.0 for every interface) or `localhost`.
 */
function gatewayHost(): string {
  const raw = process.env.GATEWAY_HOST;
  if (raw === undefined || raw === '') return '127.0.0.1';
  if (isIP(raw) === 0 && raw !== 'localhost') {
    process.stderr.write(`GATEWAY_HOST must be an IP address (127.0.0.1, 0.0.0.0, ::1) or localhost, got "${raw}"\n`);
    process.exit(1);
  }
  return raw;
}

/** Extensions the services use, created once by the superuser (a service role may not). */
async function prepareDatabase(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('create extension if not exists pg_trgm with schema public');
    await client.query('create extension if not exists btree_gin with schema public');
  } finally {
    await client.end();
  }
}

const USAGE = 'npm start [-- --replicas N] [-- --no-gateway]';

/**
 * `--replicas N` (1 to 8) and `--no-gateway` (the services on their own ports, no nginx: the
 * degraded mode, only when asked for); anything else stops with one line.
 */
function parseArgs(argv: string[]): { replicas: number; gateway: boolean } {
  let replicas = 1;
  let gateway = true;
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i]!.split('=', 2) as [string, string | undefined];
    if (flag === systemPackages.NO_GATEWAY && inline === undefined) {
      gateway = false;
      continue;
    }
    if (flag !== '--replicas') {
      process.stderr.write(`unknown option "${argv[i]}": ${USAGE}\n`);
      process.exit(2);
    }
    const raw = inline ?? argv[++i] ?? '';
    replicas = Number(raw);
    if (!/^\d+$/.test(raw) || replicas < 1 || replicas > MAX_REPLICAS) {
      process.stderr.write(`--replicas must be a whole number from 1 to ${MAX_REPLICAS}, got "${raw}"\n`);
      process.exit(2);
    }
  }
  return { replicas, gateway };
}

/**
 * What a run without the gateway says last: nothing answers on the gateway's port, and which
 * URLs of each service's own port serve instead.
 */
function withoutGateway(gatewayPort: number, ports: Record<string, number>): string[] {
  const paths = HOME_PATHS;
  return [
    `no gateway (--no-gateway): nothing answers on http://localhost:${gatewayPort}; each service answers on its own port instead:`,
    ...SERVICES.map(
      (svc) =>
        `  ${svc.padEnd(10)} http://localhost:${ports[svc]}${paths[svc]}  http://localhost:${ports[svc]}/docs/${svc}  http://localhost:${ports[svc]}/account/${svc}`,
    ),
    `  (the README's http://localhost:${gatewayPort}/... examples: use the service's port in their place)`,
  ];
}

/** The usual port when nothing listens there, else a free one (a second run, another tool). */
async function preferredPort(variable: string, usual: number): Promise<number> {
  const wanted = portFrom(variable, usual);
  try {
    await waitForPort(wanted, 200);
    return await freePort();
  } catch {
    return wanted;
  }
}

/** A port npm start is about to listen on: whose it is and the variable that moves it. */
interface NeededPort {
  port: number;
  host: string;
  what: string;
  variable: string;
}

/**
 * The ports the gateway and the services will listen on, checked before anything starts: one
 * held by another program (a second clone's npm start, say) would otherwise leave nginx unable to
 * bind and the services crash-looping while the other program answers in their place. Each taken
 * port is one line: the port, who holds it where /proc tells, and the variable that moves it.
 */
async function takenPorts(needed: NeededPort[]): Promise<string[]> {
  const lines: string[] = [];
  for (const { port, host, what, variable } of needed) {
    if (await canListen(port, host)) continue;
    const holder = portHolder(port);
    lines.push(
      `port ${port} is taken${holder ? ` by ${holder}` : ''}: ${what} listens there; stop that program or set ${variable} to a free port`,
    );
  }
  return lines;
}

let postgres: RunningPostgres | undefined;
let redis: RunningRedis | undefined;
let product: RunningProduct | undefined;
let stopping = false;

/** Stops in order: gateway, services (they drain in-flight requests), Redis, database. */
async function stopAll(code: number): Promise<void> {
  if (stopping) return;
  stopping = true;
  process.stdout.write('\nstopping...\n');
  await product?.stop();
  await redis?.stop().catch(() => {});
  await postgres?.stop().catch(() => {});
  clearRuntime();
  process.exit(code);
}

const onSignal = () => void stopAll(0);

async function main(): Promise<void> {
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const args = process.argv.slice(2);
  const { replicas, gateway } = parseArgs(args);

  // Redis first: without it, --replicas is refused before anything starts.
  let redisUrl = process.env.REDIS_URL || undefined;
  const redisServer = redisUrl ? undefined : findExecutable('redis-server');
  if (!redisUrl && !redisServer && replicas > 1) {
    process.stderr.write(
      '--replicas needs Redis (shared rate limits and idempotency records): install redis-server or set REDIS_URL\n',
    );
    process.exit(2);
  }
  // scripts/cli.mjs installs what is missing or stops before this; a direct run stops the same way.
  const missing = systemPackages.missingPrograms('start', { args, env: process.env });
  if (missing.length > 0) {
    const how = {
      reason: 'start.js was run directly (npm start installs them when run as root)',
      root: process.getuid?.() === 0,
      aptGet: findExecutable('apt-get') !== undefined,
    };
    process.stderr.write(systemPackages.stopMessage('start', missing, how));
    process.exit(1);
  }
  const gatewayPort = portFrom('GATEWAY_PORT', 8080);
  const gatewayAddress = gatewayHost();
  const ports = Object.fromEntries(
    SERVICES.map((svc) => [svc, portFrom(`${svc.toUpperCase()}_PORT`, DEFAULT_PORTS[svc])]),
  );
  // nginx listens on GATEWAY_HOST (this machine only unless set); the services on HOST (every address unless set).
  const servicesHost = process.env.HOST || '0.0.0.0';
  const taken = await takenPorts([
    ...(gateway ? [{ port: gatewayPort, host: gatewayAddress, what: 'the gateway', variable: 'GATEWAY_PORT' }] : []),
    ...SERVICES.flatMap((svc) =>
      Array.from({ length: replicas }, (_, i) => ({
        port: ports[svc]! + REPLICA_PORT_STEP * i,
        host: servicesHost,
        what: i === 0 ? svc : `${svc} instance ${i + 1} (${svc.toUpperCase()}_PORT + ${REPLICA_PORT_STEP * i})`,
        variable: `${svc.toUpperCase()}_PORT`,
      })),
    ),
  ]);
  if (taken.length > 0) {
    process.stderr.write(`${taken.join('\n')}\nnpm start stopped before starting anything.\n`);
    process.exit(1);
  }
  if (!redisUrl && !redisServer) {
    process.stdout.write(
      'redis-server is not on PATH and REDIS_URL is unset: single-instance mode (limits and idempotency records kept in each process)\n',
    );
  }

  let databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) {
    const pgDir = join(dataDir, 'pg');
    const port = await preferredPort('EMBEDDED_PG_PORT', 54329);
    process.stdout.write(`starting embedded Postgres (data in ${pgDir}) on port ${port}...\n`);
    postgres = await startEmbeddedPostgres({ dataDir: pgDir, port, persistent: true });
    databaseUrl = postgres.url;
  }
  await prepareDatabase(databaseUrl);
  if (redisServer) {
    const redisDir = join(dataDir, 'redis');
    const port = await preferredPort('EMBEDDED_REDIS_PORT', 63799);
    process.stdout.write(`starting redis-server (data in ${redisDir}) on port ${port}...\n`);
    redis = await startRedis({ dataDir: redisDir, port });
    redisUrl = redis.url;
  }
  writeRuntime({ databaseUrl, pid: process.pid, startedAt: new Date().toISOString() });

  // Browser pages are served from the gateway, or without it from each instance's own port.
  const pagePorts = gateway
    ? [gatewayPort]
    : SERVICES.flatMap((svc) => Array.from({ length: replicas }, (_, i) => ports[svc]! + REPLICA_PORT_STEP * i));
  product = await startProduct({
    databaseUrl,
    redisUrl,
    replicas,
    ports,
    gateway,
    gatewayPort,
    nginxDir: join(dataDir, 'nginx'),
    // A TLS terminator or load balancer in front of this machine's gateway names its clients.
    gatewayVars: {
      GATEWAY_HOST: gatewayAddress,
      ...(process.env.TRUSTED_PROXIES ? { TRUSTED_PROXIES: process.env.TRUSTED_PROXIES } : {}),
    },
    env: {
      ALLOWED_ORIGINS:
        process.env.ALLOWED_ORIGINS ??
        pagePorts.flatMap((port) => [`http://localhost:${port}`, `http://127.0.0.1:${port}`]).join(','),
      // A person trying the product locally signs up at /account/<service>.
      SIGNUP: process.env.SIGNUP ?? 'open',
      // Webhooks to a receiver on this machine (a script on localhost) are allowed locally.
      WEBHOOK_ALLOW_PRIVATE: process.env.WEBHOOK_ALLOW_PRIVATE ?? '1',
      // OAuth client documents on this machine stay refused (OAUTH_CIMD_ALLOW_PRIVATE is not set) but
      // one: meetings', which tasks fetches from the loopback gateway when an account connects it.
      OAUTH_CIMD_TRUSTED:
        process.env.OAUTH_CIMD_TRUSTED ??
        ['localhost', '127.0.0.1'].map((host) => `http://${host}:${gatewayPort}${MEETINGS_CLIENT_DOCUMENT}`).join(','),
    },
    // A process that exits while npm start is not stopping is started again; the gateway and
    // the other instances keep serving meanwhile (and a restarted gateway serves them again).
    supervise: { log: (line) => process.stderr.write(`${line}\n`) },
  });
  const lines = ['', 'ready:'];
  if (product.gateway)
    lines.push(
      `  gateway    http://localhost:${gatewayPort}  (${SERVICES.map((svc) => `${HOME_PATHS[svc]}... ${svc}`).join(', ')})`,
    );
  else lines.push('  gateway    none (--no-gateway)');
  for (const svc of SERVICES)
    lines.push(`  ${svc.padEnd(10)} ${product.instances[svc].map((i) => `http://localhost:${i.port}`).join('  ')}`);
  lines.push(`  database   ${postgres ? `embedded Postgres, data in ${join(dataDir, 'pg')}` : 'DATABASE_URL'}`);
  lines.push(
    `  redis      ${redis ? `redis-server, data in ${join(dataDir, 'redis')}` : redisUrl ? 'REDIS_URL' : 'none (single-instance mode)'}`,
  );
  lines.push('A service process or the gateway that exits is restarted. Ctrl-C stops everything.');
  if (!product.gateway) lines.push(...withoutGateway(gatewayPort, product.ports));
  process.stdout.write(`${lines.join('\n')}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`start failed: ${err instanceof Error ? err.message : String(err)}\n`);
  void stopAll(1);
});
