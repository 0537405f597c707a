import type { ChildProcess } from 'node:child_process';
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { isIPv6 } from 'node:net';
import { join } from 'node:path';
import { findExecutable, stopChild } from './processes.js';
import { waitForPort } from './ports.js';
import { repoRoot } from './root.js';
import { GATEWAY_GUARDS, SERVICES, type Service } from './services.generated.js';
import { Supervised } from './supervisor.js';

export { repoRoot } from './root.js';

/** host:port of each instance of each service, comma-separated: the `server` line is repeated for each. */
type Upstreams = { [S in Service as `${Uppercase<S>}_UPSTREAM`]: string };

/** Every service's upstream variable, each `address(service)`: a gateway in front of every declared service. */
export function upstreams(address: (service: Service) => string): Upstreams {
  return Object.fromEntries(SERVICES.map((svc) => [`${svc.toUpperCase()}_UPSTREAM`, address(svc)])) as Upstreams;
}

export interface GatewayVars extends Upstreams {
  GATEWAY_PORT: number;
  /** The address the gateway listens on: 127.0.0.1 unless given (`npm start`'s GATEWAY_HOST). */
  GATEWAY_HOST?: string;
  /** The gateway's local flood guard in front of meetings (the 180-a-minute cap is the service's). */
  MEETINGS_GUARD_RATE?: string;
  MEETINGS_GUARD_BURST?: number;
  /** The gateway's per-address guard of /mcp/<service> (each service also counts MCP requests per account). */
  MCP_GUARD_RATE?: string;
  MCP_GUARD_BURST?: number;
  /** Proxies in front of the gateway whose X-Forwarded-For names the client (a comma list); none by default. */
  TRUSTED_PROXIES?: string;
}

/** Ten MCP requests a second per address after a burst of 120: an assistant's pace, not a flood's. */
const MCP_GUARD = { MCP_GUARD_RATE: '600r/m', MCP_GUARD_BURST: 120 } as const;

/** Where a gateway on this machine listens unless told otherwise: reachable from here only. */
const LOOPBACK = '127.0.0.1';

/** The address to check a gateway listening on `host` at: an unspecified address is reached on loopback. */
const reachableAt = (host: string | undefined): string =>
  !host || host === '0.0.0.0' || host === '::' ? LOOPBACK : host;

/** An address as a URL or nginx's `listen` takes it (an IPv6 one in brackets). */
const bracketed = (host: string): string => (isIPv6(host) ? `[${host}]` : host);

/** No proxy in front: `unix:` names no peer the gateway can have (see the template). */
const NO_TRUSTED_PROXIES = 'unix:';

/**
 * Renders infra/nginx/templates/gateway.conf.template the way the nginx image's envsubst does,
 * plus one thing envsubst cannot do: a line whose variable holds a comma-separated list (the
 * upstream servers of a service's replicas) is written once per item. Compose and Kubernetes
 * give one name per service instead, which resolves to every instance.
 */
function renderGateway(vars: GatewayVars): string {
  const template = readFileSync(join(repoRoot, 'infra', 'nginx', 'templates', 'gateway.conf.template'), 'utf8');
  const host = vars.GATEWAY_HOST || LOOPBACK;
  const all: Record<string, string | number | undefined> = {
    ...GATEWAY_GUARDS,
    ...MCP_GUARD,
    ...vars,
    GATEWAY_HOST: bracketed(host),
    TRUSTED_PROXIES: vars.TRUSTED_PROXIES || NO_TRUSTED_PROXIES,
  };
  const value = (name: string) => (all[name] === undefined ? undefined : String(all[name]));
  const variable = /\$\{([A-Z_]+)\}/g;
  return template
    .split('\n')
    .flatMap((line) => {
      const list = [...line.matchAll(variable)].map((m) => m[1]!).find((name) => value(name)?.includes(','));
      const lines = list
        ? value(list)!
            .split(',')
            .map((item) => line.replaceAll(`\${${list}}`, item))
        : [line];
      return lines.map((l) => l.replace(variable, (whole, name: string) => value(name) ?? whole));
    })
    .join('\n');
}

/** The nginx image's start-up check of TRUSTED_PROXIES (compose and Kubernetes run it too). */
const trustedProxiesCheck = join(repoRoot, 'infra', 'nginx', 'entrypoint', '15-trusted-proxies.sh');

/** Passes on the check's warning about a trusted range wider than a /16 (it never stops the start). */
function warnOfWideTrustedProxies(trusted: string | undefined): void {
  if (!trusted) return;
  const check = spawnSync('sh', [trustedProxiesCheck], {
    env: { PATH: process.env.PATH, TRUSTED_PROXIES: trusted },
    encoding: 'utf8',
  });
  if (check.stderr) process.stderr.write(check.stderr);
}

export interface RunningNginx {
  url: string;
  stop(): Promise<void>;
  /** The current master process (a new one after each supervised restart). */
  readonly process: ChildProcess;
  /** From now on an exit stop() did not ask for restarts nginx after a backoff, logged through `log`. */
  supervise(restart: { log(line: string): void }): void;
}

/** A directive of the containers' main config (infra/nginx/nginx.conf), so every gateway runs alike. */
function mainDirective(pattern: RegExp, what: string): string {
  const match = pattern.exec(readFileSync(join(repoRoot, 'infra', 'nginx', 'nginx.conf'), 'utf8'));
  if (!match) throw new Error(`infra/nginx/nginx.conf has no ${what}`);
  return match[1]!;
}

/**
 * The containers' worker_rlimit_nofile, or this process's hard limit when lower: raising past it
 * needs a privilege a container or CI runner may lack (nginx would warn on every start).
 */
function fileLimit(): number {
  const wanted = Number(mainDirective(/^worker_rlimit_nofile (\d+);/m, 'worker_rlimit_nofile'));
  const hard = Number(spawnSync('/bin/sh', ['-c', 'ulimit -Hn'], { encoding: 'utf8' }).stdout.trim());
  return Number.isFinite(hard) && hard > 0 ? Math.min(wanted, hard) : wanted;
}

/** The containers' JSON access log format. */
const gatewayLogFormat = () => mainDirective(/^\s*(log_format gateway_json[^;]*;)/m, 'log_format gateway_json');

/**
 * nginx in the foreground with a prefix directory of its own (`dir`: config, pid, temp files),
 * its `http` block holding `http` after the settings every one here shares.
 */
function spawnNginx(bin: string, dir: string, workers: string, http: string[], gatewayLog = true): ChildProcess {
  const tmp = join(dir, 'tmp');
  mkdirSync(join(dir, 'logs'), { recursive: true });
  mkdirSync(tmp, { recursive: true });
  writeFileSync(
    join(dir, 'nginx.conf'),
    [
      `worker_processes ${workers};`,
      `pid ${join(dir, 'nginx.pid')};`,
      'error_log stderr error;',
      // The containers' connection and open-file limits (10,000 streams through one gateway).
      `worker_rlimit_nofile ${fileLimit()};`,
      `events { ${mainDirective(/^\s*(worker_connections \d+;)/m, 'worker_connections')} }`,
      'http {',
      // The gateway's JSON line names its own variables ($gw_request_id); other nginx here log nothing.
      ...(gatewayLog
        ? [`  ${gatewayLogFormat()}`, `  access_log ${join(dir, 'logs', 'access.log')} gateway_json;`]
        : ['  access_log off;']),
      `  client_body_temp_path ${tmp}/body; proxy_temp_path ${tmp}/proxy; fastcgi_temp_path ${tmp}/fcgi;`,
      `  uwsgi_temp_path ${tmp}/uwsgi; scgi_temp_path ${tmp}/scgi;`,
      ...http.map((line) => `  ${line}`),
      '}',
      '',
    ].join('\n'),
  );
  // `user` is only honoured when started as root; nobody can read the prefix in /tmp or .data.
  // A process group of its own: the workers of a master that dies (SIGKILL, a crash) live on,
  // holding the port a restarted master needs, so they go with it.
  const child = spawn(bin, ['-p', dir, '-c', join(dir, 'nginx.conf'), '-g', 'daemon off; user root;'], {
    stdio: ['ignore', 'ignore', 'inherit'],
    detached: true,
  });
  child.once('exit', () => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // no worker left
    }
  });
  return child;
}

/**
 * Starts nginx in the foreground with a prefix directory of its own (`dir`), serving the
 * rendered gateway; rejects when it exits while starting (its own error line is on stderr).
 * Returns undefined when nginx is not installed.
 */
export async function startNginx(dir: string, vars: GatewayVars): Promise<RunningNginx | undefined> {
  const bin = findExecutable('nginx');
  if (!bin) return undefined;
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'gateway.conf'), renderGateway(vars));
  warnOfWideTrustedProxies(vars.TRUSTED_PROXIES);
  let failStart: ((err: Error) => void) | undefined;
  const exited = new Promise<never>((_, reject) => (failStart = reject));
  exited.catch(() => {});
  const nginx = new Supervised('gateway', {
    spawn: () => spawnNginx(bin, dir, 'auto', ['keepalive_timeout 65s;', `include ${join(dir, 'gateway.conf')};`]),
    ready: () => waitForPort(vars.GATEWAY_PORT, 10000, reachableAt(vars.GATEWAY_HOST)),
    onExit: (code, signal) =>
      failStart?.(
        new Error(
          `nginx exited (code ${code}, signal ${signal}) while starting the gateway on port ${vars.GATEWAY_PORT}`,
        ),
      ),
  });
  try {
    await Promise.race([waitForPort(vars.GATEWAY_PORT, 10000, reachableAt(vars.GATEWAY_HOST)), exited]);
  } catch (err) {
    await nginx.stop();
    throw err;
  }
  failStart = undefined;
  return {
    url: `http://${bracketed(reachableAt(vars.GATEWAY_HOST))}:${vars.GATEWAY_PORT}`,
    stop: () => nginx.stop(),
    get process() {
      return nginx.process;
    },
    supervise: (restart) => nginx.supervise(restart),
  };
}

export interface TlsTerminator {
  /** https://localhost:<port> */
  url: string;
  /** The PEM certificate it serves (made for this run): a client's only trusted CA. */
  certificate: string;
  stop(): Promise<void>;
}

/**
 * An nginx terminating TLS in front of `upstream` (the gateway), as a Kubernetes Ingress
 * controller does: a certificate made for the run (openssl, for localhost and 127.0.0.1), the
 * client's Host kept, X-Forwarded-For appended to (a client's own entries pass through, as they
 * do through ingress-nginx with forwarded headers on), X-Forwarded-Proto https, and every
 * connection to the gateway made from 127.0.0.1: the one address the gateway is told to trust.
 * Returns undefined when nginx or openssl is not installed.
 */
export async function startTlsTerminator(
  dir: string,
  o: { port: number; upstream: string },
): Promise<TlsTerminator | undefined> {
  const bin = findExecutable('nginx');
  const openssl = findExecutable('openssl');
  if (!bin || !openssl) return undefined;
  mkdirSync(dir, { recursive: true });
  const [cert, key] = [join(dir, 'cert.pem'), join(dir, 'key.pem')];
  const made = spawnSync(
    openssl,
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=DNS:localhost,IP:127.0.0.1',
      '-keyout',
      key,
      '-out',
      cert,
    ],
    { encoding: 'utf8' },
  );
  if (made.status !== 0) throw new Error(`openssl could not make a certificate: ${made.stderr}`);
  const child = spawnNginx(
    bin,
    dir,
    '1',
    [
      'server {',
      `  listen 127.0.0.1:${o.port} ssl;`,
      `  ssl_certificate ${cert};`,
      `  ssl_certificate_key ${key};`,
      '  client_max_body_size 4m;',
      '  location / {',
      `    proxy_pass http://${o.upstream};`,
      '    proxy_http_version 1.1;',
      '    proxy_set_header Connection "";',
      '    proxy_set_header Host $http_host;',
      '    proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;',
      '    proxy_set_header X-Forwarded-Proto https;',
      '    proxy_bind 127.0.0.1;',
      '  }',
      '}',
    ],
    false,
  );
  await waitForPort(o.port, 10000);
  return { url: `https://localhost:${o.port}`, certificate: readFileSync(cert, 'utf8'), stop: () => stopChild(child) };
}
