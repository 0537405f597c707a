import { readFileSync } from 'node:fs';

/** Resident set size of a process in MB (Linux /proc), or 0 when it cannot be read. */
export function rssMb(pid: number | undefined): number {
  if (!pid) return 0;
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Math.round(Number(match[1]) / 1024) : 0;
  } catch {
    return 0;
  }
}

/** Samples a process's RSS every 250 ms while `work` runs; returns the peak. */
export async function peakRss<T>(pid: number | undefined, work: () => Promise<T>): Promise<{ result: T; peakMb: number }> {
  let peak = rssMb(pid);
  const timer = setInterval(() => {
    peak = Math.max(peak, rssMb(pid));
  }, 250);
  try {
    const result = await work();
    return { result, peakMb: Math.max(peak, rssMb(pid)) };
  } finally {
    clearInterval(timer);
  }
}
