import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { findExecutable, stopChild } from './processes.js';
import { waitForPort } from './ports.js';

/** The repository root (this file lives at packages/devstack/dist/). */
export const repoRoot = resolve(__dirname, '..', '..', '..');

export interface GatewayVars {
  GATEWAY_PORT: number;
  TASKS_UPSTREAM: string;
  MEETINGS_UPSTREAM: string;
  CLIPBOARD_UPSTREAM: string;
  /** The meetings network-level cap; the spec's 180 a minute unless given. */
  MEETINGS_CAP_RATE?: string;
  MEETINGS_CAP_BURST?: number;
}

/** The spec's meetings cap: 180 requests per minute per client address. */
export const MEETINGS_CAP = { MEETINGS_CAP_RATE: '180r/m', MEETINGS_CAP_BURST: 180 } as const;

/** Renders infra/nginx/templates/gateway.conf.template the way the nginx image's envsubst does. */
export function renderGateway(vars: GatewayVars): string {
  const template = readFileSync(join(repoRoot, 'infra', 'nginx', 'templates', 'gateway.conf.template'), 'utf8');
  const all: Record<string, unknown> = { ...MEETINGS_CAP, ...vars };
  return template.replace(/\$\{([A-Z_]+)\}/g, (whole, name: string) => {
    const value = all[name];
    return value === undefined ? whole : String(value);
  });
}

export interface RunningNginx {
  url: string;
  stop(): Promise<void>;
  process: ChildProcess;
}

/**
 * Starts nginx in the foreground with a prefix directory of its own (`dir`), serving the
 * rendered gateway. Returns undefined when nginx is not installed.
 */
export async function startNginx(dir: string, vars: GatewayVars): Promise<RunningNginx | undefined> {
  const bin = findExecutable('nginx');
  if (!bin) return undefined;
  mkdirSync(join(dir, 'logs'), { recursive: true });
  mkdirSync(join(dir, 'tmp'), { recursive: true });
  writeFileSync(join(dir, 'gateway.conf'), renderGateway(vars));
  const tmp = join(dir, 'tmp');
  writeFileSync(
    join(dir, 'nginx.conf'),
    [
      'worker_processes auto;',
      `pid ${join(dir, 'nginx.pid')};`,
      'error_log stderr error;',
      'events { worker_connections 4096; }',
      'http {',
      '  access_log off;',
      `  client_body_temp_path ${tmp}/body; proxy_temp_path ${tmp}/proxy; fastcgi_temp_path ${tmp}/fcgi;`,
      `  uwsgi_temp_path ${tmp}/uwsgi; scgi_temp_path ${tmp}/scgi;`,
      '  keepalive_timeout 65s;',
      `  include ${join(dir, 'gateway.conf')};`,
      '}',
      '',
    ].join('\n'),
  );
  // `user` is only honoured when started as root; nobody can read the prefix in /tmp or .data.
  const child = spawn(bin, ['-p', dir, '-c', join(dir, 'nginx.conf'), '-g', 'daemon off; user root;'], { stdio: ['ignore', 'ignore', 'inherit'] });
  await waitForPort(vars.GATEWAY_PORT, 10000);
  return { url: `http://127.0.0.1:${vars.GATEWAY_PORT}`, stop: () => stopChild(child), process: child };
}
