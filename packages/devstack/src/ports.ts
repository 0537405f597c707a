import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { connect, createServer } from 'node:net';

/** A TCP port free on 127.0.0.1 right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/** Resolves once something accepts TCP connections on host:port, or rejects after `timeoutMs`. */
export async function waitForPort(port: number, timeoutMs = 15000, host = '127.0.0.1'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const sock = connect(port, host);
      sock.once('connect', () => {
        sock.destroy();
        resolve(true);
      });
      sock.once('error', () => {
        sock.destroy();
        resolve(false);
      });
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`nothing listening on ${host}:${port} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** True when a server may listen on host:port right now (nothing else holds it). */
export function canListen(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, host, () => srv.close(() => resolve(true)));
  });
}

/** The inodes of the sockets listening on TCP `port`, from /proc/net/tcp and tcp6. */
function listeningInodes(port: number): string[] {
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  return ['/proc/net/tcp', '/proc/net/tcp6'].flatMap((table) => {
    let text = '';
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      return [];
    }
    // sl local_address rem_address st ... inode: state 0A is LISTEN.
    return text
      .split('\n')
      .slice(1)
      .map((line) => line.trim().split(/\s+/))
      .filter((f) => f[1]?.endsWith(`:${hexPort}`) && f[3] === '0A')
      .map((f) => f[9]!);
  });
}

/**
 * Who listens on TCP `port`, as far as /proc tells (Linux; another user's processes stay
 * unnamed unless this one is root): `pid 123 (nginx, in /srv/other-clone)`. The process name
 * and working folder only, never its command line, which may carry a password.
 */
export function portHolder(port: number): string | undefined {
  const inodes = new Set(listeningInodes(port).map((inode) => `socket:[${inode}]`));
  if (inodes.size === 0) return undefined;
  let pids: string[] = [];
  try {
    pids = readdirSync('/proc').filter((entry) => /^\d+$/.test(entry));
  } catch {
    return undefined;
  }
  for (const pid of pids) {
    let fds: string[] = [];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue; // gone, or another user's
    }
    const holds = fds.some((fd) => {
      try {
        return inodes.has(readlinkSync(`/proc/${pid}/fd/${fd}`));
      } catch {
        return false;
      }
    });
    if (!holds) continue;
    const read = (what: () => string) => {
      try {
        return what();
      } catch {
        return undefined;
      }
    };
    const name = read(() => readFileSync(`/proc/${pid}/comm`, 'utf8').trim());
    const cwd = read(() => readlinkSync(`/proc/${pid}/cwd`));
    return `pid ${pid} (${[name, cwd && `in ${cwd}`].filter(Boolean).join(', ')})`;
  }
  return 'a process this user cannot see';
}
