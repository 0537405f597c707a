import type { Logger } from 'pino';
import { runAs } from '../webhooks/actor.js';

/** Work a worker process repeats besides webhook delivery (clipboard: deleting expired sensitive items; tasks: expired idempotency keys). */
export interface RecurringJob {
  name: string;
  /** The pause between the end of one run and the start of the next. */
  everyMs: number;
  run(): Promise<unknown>;
}

interface Startable {
  start(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * `worker` with `jobs` beside it: each job runs every `everyMs` from `start` until `stop`, which
 * waits for a run in flight. A run that fails (Postgres down) is logged when the job starts failing
 * and when it recovers, not on every try, and tried again after the same pause. The jobs start even
 * when the worker's own start fails, so a start retried by the process does not start them twice.
 */
export function withRecurringJobs<W extends Startable>(worker: W, jobs: readonly RecurringJob[], logger: Logger): W {
  if (jobs.length === 0) return worker;
  let started = false;
  const timers = new Set<NodeJS.Timeout>();
  const inFlight = new Set<Promise<void>>();
  const schedule = (job: RecurringJob, failing: boolean) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      // What a job changes, the system changed: its events name the job.
      const run = runAs({ type: 'system', id: job.name }, () => job.run())
        .then(
          () => {
            if (failing) logger.info({ job: job.name }, 'recurring job recovered');
            return false;
          },
          (err: unknown) => {
            if (!failing)
              logger.warn(
                { job: job.name, err: err instanceof Error ? err.message : String(err) },
                'recurring job failed; trying again',
              );
            return true;
          },
        )
        .then((fails) => {
          inFlight.delete(run);
          if (started) schedule(job, fails);
        });
      inFlight.add(run);
    }, job.everyMs);
    timers.add(timer);
  };
  return {
    ...worker,
    async start() {
      if (!started) {
        started = true;
        for (const job of jobs) schedule(job, false);
      }
      await worker.start();
    },
    async stop() {
      started = false;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      await Promise.all(inFlight);
      await worker.stop();
    },
  };
}
