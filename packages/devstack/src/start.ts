import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { startEmbeddedPostgres, type RunningPostgres } from './postgres.js';
import { freePort, waitForPort } from './ports.js';
import { DEFAULT_PORTS, SERVICES, startProduct, type RunningProduct } from './product.js';
import { clearRuntime, dataDir, writeRuntime } from './runtime.js';

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

/** A postmaster.pid left by a killed run would stop Postgres from starting again. */
function clearStalePostmaster(pgDir: string): void {
  const pidFile = join(pgDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
  try {
    process.kill(pid, 0);
  } catch {
    rmSync(pidFile, { force: true });
  }
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

let postgres: RunningPostgres | undefined;
let product: RunningProduct | undefined;
let stopping = false;

/** Stops in order: gateway, services (they drain in-flight requests), database. */
async function stopAll(code: number): Promise<void> {
  if (stopping) return;
  stopping = true;
  process.stdout.write('\nstopping...\n');
  await product?.stop();
  await postgres?.stop().catch(() => {});
  clearRuntime();
  process.exit(code);
}

async function main(): Promise<void> {
  process.on('SIGINT', () => void stopAll(0));
  process.on('SIGTERM', () => void stopAll(0));

  let databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) {
    const pgDir = join(dataDir, 'pg');
    clearStalePostmaster(pgDir);
    const wanted = portFrom('EMBEDDED_PG_PORT', 54329);
    const port = await freePort().then(async (free) => {
      try {
        await waitForPort(wanted, 200);
        return free; // the usual port is taken: use a free one
      } catch {
        return wanted;
      }
    });
    process.stdout.write(`starting embedded Postgres (data in ${pgDir}) on port ${port}...\n`);
    postgres = await startEmbeddedPostgres({ dataDir: pgDir, port, persistent: true });
    databaseUrl = postgres.url;
  }
  await prepareDatabase(databaseUrl);
  writeRuntime({ databaseUrl, pid: process.pid, startedAt: new Date().toISOString() });

  const gatewayPort = portFrom('GATEWAY_PORT', 8080);
  const ports = Object.fromEntries(SERVICES.map((svc) => [svc, portFrom(`${svc.toUpperCase()}_PORT`, DEFAULT_PORTS[svc])]));
  product = await startProduct({
    databaseUrl,
    redisUrl: process.env.REDIS_URL,
    ports,
    gatewayPort,
    nginxDir: join(dataDir, 'nginx'),
    env: {
      ALLOWED_ORIGINS: process.env.ALLOWED_ORIGINS ?? `http://localhost:${gatewayPort},http://127.0.0.1:${gatewayPort}`,
      // A person trying the product locally signs up at /account/<service>.
      SIGNUP: process.env.SIGNUP ?? 'open',
    },
    onExit: (svc, code) => {
      process.stderr.write(`${svc} exited (code ${code}); stopping everything\n`);
      void stopAll(1);
    },
  });
  const nginx = product.gateway;
  const lines = ['', 'ready:'];
  if (nginx) lines.push(`  gateway    http://localhost:${gatewayPort}  (/api/v1 tasks, /api/me... meetings, /api/clipboard... clipboard)`);
  else lines.push('  nginx is not on PATH: no gateway; the services are served directly (apt-get install nginx-light for the gateway)');
  for (const svc of SERVICES) lines.push(`  ${svc.padEnd(10)} http://localhost:${product.ports[svc]}`);
  lines.push(`  database   ${postgres ? 'embedded Postgres, data in .data/pg' : 'DATABASE_URL'}`);
  lines.push('Ctrl-C stops everything.', '');
  process.stdout.write(lines.join('\n'));
}

main().catch((err: unknown) => {
  process.stderr.write(`start failed: ${err instanceof Error ? err.message : String(err)}\n`);
  void stopAll(1);
});
