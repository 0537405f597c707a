import type pg from 'pg';
import { cpuMeter, postgresServing } from '../cpu.js';

/** Runs one step of a seed and logs its wall-clock seconds and Postgres's CPU seconds meanwhile. */
export type Timed = <T>(label: string, fn: () => Promise<T>) => Promise<T>;

/**
 * A step timer for the seeds on `client`'s server: each step's line on stderr gives its wall
 * clock and the CPU every process of that Postgres used meanwhile (the backend, its parallel
 * workers, autovacuum), from /proc: on a busy machine the CPU says more than the clock.
 */
export async function stepTimer(client: pg.ClientBase): Promise<Timed> {
  const { rows } = await client.query<{ pid: number }>('select pg_backend_pid() as pid');
  const postgres = postgresServing(rows[0]!.pid);
  return async (label, fn) => {
    const started = Date.now();
    const stop = cpuMeter(postgres);
    const result = await fn();
    const cpu = stop();
    process.stderr.write(
      `  seed step: ${label}: ${((Date.now() - started) / 1000).toFixed(1)} s, Postgres CPU ${(cpu / 1000).toFixed(1)} s\n`,
    );
    return result;
  };
}
