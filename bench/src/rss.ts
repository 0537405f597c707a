import { readFileSync } from 'node:fs';

/** Resident set size of a process in MB (Linux /proc), or 0 when it cannot be read. */
function rssMb(pid: number | undefined): number {
  if (!pid) return 0;
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Math.round(Number(match[1]) / 1024) : 0;
  } catch {
    return 0;
  }
}

/** Samples the processes' RSS every 250 ms while `work` runs; returns the highest any one of them reached. */
export async function peakRss<T>(
  pids: Array<number | undefined>,
  work: () => Promise<T>,
): Promise<{ result: T; peakMb: number }> {
  const sample = () => Math.max(0, ...pids.map(rssMb));
  let peak = sample();
  const timer = setInterval(() => {
    peak = Math.max(peak, sample());
  }, 250);
  try {
    const result = await work();
    return { result, peakMb: Math.max(peak, sample()) };
  } finally {
    clearInterval(timer);
  }
}
