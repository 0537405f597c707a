import { Counter, Gauge, type Registry } from 'prom-client';
import type { AnyDb } from '../database/database.js';
import * as repo from './repository.js';

/** What became of a delivery attempt (or of a delivery not attempted). */
type Outcome = 'delivered' | 'retry' | 'failed' | 'skipped';

/** Counts `n` deliveries (default 1) under `outcome`. */
export type CountOutcome = (outcome: Outcome, n?: number) => void;

/**
 * The worker's metrics on `registry`: the attempts by outcome (each starting at 0, so a rate is
 * defined before the first delivery), and the age of the oldest pending delivery, read from
 * `db()` at each scrape (none before the worker started). Answers the counting function.
 */
export function deliveryMetrics(registry: Registry, db: () => AnyDb | undefined): CountOutcome {
  const deliveries = new Counter({
    name: 'webhook_deliveries_total',
    help: 'Webhook delivery attempts by outcome: delivered, retry (failed, tried again later), failed (given up after 24 h), skipped (subscription disabled, or whoever changed it last lost the scope)',
    labelNames: ['outcome'],
    registers: [registry],
  });
  for (const outcome of ['delivered', 'retry', 'failed', 'skipped']) deliveries.inc({ outcome }, 0);
  new Gauge({
    name: 'webhook_queue_age_seconds',
    help: 'Seconds since the oldest pending webhook delivery became due (0: nothing waits)',
    registers: [registry],
    async collect() {
      const current = db();
      if (!current) return;
      try {
        this.set(await repo.queueAgeSeconds(current));
      } catch {
        // Postgres unavailable: the last value stays.
      }
    },
  });
  return (outcome, n = 1) => deliveries.inc({ outcome }, n);
}
