import { readdirSync, readFileSync } from 'node:fs';

/** Linux reports process times in clock ticks; 100 a second on every kernel this runs on (`getconf CLK_TCK`). */
const MS_PER_TICK = 10;

/** User + system CPU time a process has used so far, in milliseconds (0 when it cannot be read). */
function cpuMs(pid: number | undefined): number {
  if (!pid) return 0;
  try {
    // The command name (field 2) may hold spaces: count fields after its closing parenthesis.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name.
    return (Number(fields[11]) + Number(fields[12])) * MS_PER_TICK;
  } catch {
    return 0;
  }
}

/** A process's parent (undefined when it cannot be read). */
function parentOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // ppid is the second field after the command name.
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}

/**
 * The bench's own Postgres: the postmaster that serves the backend `backendPid` and its children
 * (backends, background workers). Not every process named postgres: other servers on a shared
 * machine (another checkout's test suites) would count their work as the product's.
 */
export function postgresServing(backendPid: number): () => number[] {
  const postmaster = parentOf(backendPid);
  if (postmaster === undefined) throw new Error(`no process ${backendPid}: the bench's Postgres runs elsewhere`);
  return () => pidsNamed('postgres').filter((pid) => pid === postmaster || parentOf(pid) === postmaster);
}

/** Every running process of this name (`postgres`: the postmaster and its backends; `nginx`: master and workers). */
export function pidsNamed(name: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === name) pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/**
 * A CPU meter over a group of processes: started, it samples them every 200 ms; stopped, it
 * returns the milliseconds they used meanwhile. A process that ends in between (a Postgres
 * backend its pool closed as idle) counts up to its last sample; one that starts counts from zero.
 */
export function cpuMeter(pids: () => Array<number | undefined>): () => number {
  const first = new Map<number, number>();
  const last = new Map<number, number>();
  const sample = (initial: boolean) => {
    for (const pid of pids()) {
      if (!pid) continue;
      const used = cpuMs(pid);
      if (used === 0 && last.has(pid)) continue;
      if (!first.has(pid)) first.set(pid, initial ? used : 0);
      last.set(pid, used);
    }
  };
  sample(true);
  const timer = setInterval(() => sample(false), 200);
  return () => {
    clearInterval(timer);
    sample(false);
    let used = 0;
    for (const [pid, end] of last) used += end - first.get(pid)!;
    return used;
  };
}
