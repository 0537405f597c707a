import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { connect, createServer } from 'node:net';

/**
 * Where {@link freePort} looks: below Linux's ephemeral range (32768-60999), which every outgoing
 * connection takes its local port from. A port found free there could be taken by a client socket
 * (or another lane's stack) before the server meant for it listened, and a stack's readiness check
 * then passed on whatever held it: likeliest why, in a run of `npm test`'s three lanes, a meetings
 * process exited with EADDRINUSE and the gateway answered `/docs/meetings` with a 404. `npm test`
 * gives each of its four lanes a block of its own (TEST_PORT_LANE, 0-3), so no two lanes hand out the
 * same port; unset, the whole range.
 */
const PORTS = { from: 15_000, to: 32_000, lanes: 4 };
/** The ports this process has handed out, and where it looks next. */
const handedOut = new Set<number>();
let next: number | undefined;

function portBlock(): { from: number; to: number } {
  const lane = Number(process.env.TEST_PORT_LANE);
  if (!Number.isInteger(lane) || lane < 0 || lane >= PORTS.lanes) return PORTS;
  const size = Math.floor((PORTS.to - PORTS.from) / PORTS.lanes);
  return { from: PORTS.from + lane * size, to: PORTS.from + (lane + 1) * size };
}

/**
 * A TCP port free on 127.0.0.1 right now, outside the ephemeral range, not handed out before by
 * this process: the next free one of its block after the last, from a random start.
 */
export async function freePort(): Promise<number> {
  const { from, to } = portBlock();
  if (next === undefined || next < from || next >= to) next = from + Math.floor(Math.random() * (to - from));
  for (let tried = 0; tried < to - from; tried++) {
    const port = next;
    next = next + 1 >= to ? from : next + 1;
    if (handedOut.has(port) || !(await canListen(port))) continue;
    handedOut.add(port);
    return port;
  }
  throw new Error(`no free port in ${from}-${to - 1}`);
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
