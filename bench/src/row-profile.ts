import { mkdirSync, readdirSync, renameSync } from 'node:fs';
import { join } from 'node:path';

const DIR = process.env.BENCH_PROFILE;

/**
 * With BENCH_PROFILE=<dir> (the services preload bench/cpu-profile.cjs): a CPU profile of each of
 * `pids` over `work` alone, in <dir>/<row>/ (`node bench/dist/profile.js <dir>/<row>` sums them).
 * Without it, just `work`.
 */
export async function profiledRow<T>(row: string, pids: Array<number | undefined>, work: () => Promise<T>): Promise<T> {
  if (!DIR) return work();
  mkdirSync(DIR, { recursive: true }); // the processes write their profiles into it first
  const signal = () => {
    for (const pid of pids) if (pid) process.kill(pid, 'SIGUSR2');
  };
  signal();
  try {
    return await work();
  } finally {
    signal();
    // Each process writes its profile from its signal handler: give them a moment.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const into = join(DIR, row.replace(/[^\w.-]+/g, '-').replace(/^-|-$/g, ''));
    mkdirSync(into, { recursive: true });
    for (const file of readdirSync(DIR).filter((f) => f.endsWith('.cpuprofile')))
      renameSync(join(DIR, file), join(into, file));
  }
}
