import type { AnyDb } from '../database/database.js';
import * as repo from './repository.js';

/** Deliveries read at most per look (a longer burst is read over the next looks). */
const LIMIT = 5_000;
/** A skipped number is looked for again this long (a write that commits later); the sweep covers a later one. */
const GAP_MS = 30_000;
/** Skipped numbers kept at most; a wider jump (a subscription's rows deleted) is left to the sweep. */
const MAX_GAPS = 10_000;

/**
 * Follows the outbox's newest end for the wake-up loop: each look reads what was recorded since
 * the last one, a range of the primary key, so its cost is the new rows whatever history or dead
 * rows lie behind them. (The due scan of the pending index walked every settled row that vacuum had
 * not yet removed: 6 to 10 ms a look, 40,000 entries, under the bench's 1,000 creates a second.)
 *
 * Numbers are taken in order but can commit out of order: a number skipped by one look (its write
 * had not committed) is looked for again by the next ones, for GAP_MS. What that misses (a write
 * open longer, a process started while writes were open) the periodic due scan finds.
 */
export class OutboxFollower {
  private after: number | undefined;
  /** Skipped numbers, and when they were first missed. */
  private readonly gaps = new Map<number, number>();

  /** The subscriptions with a delivery recorded since the last look that still waits (none on the first look, which finds its place). */
  async look(db: AnyDb): Promise<Set<string>> {
    const found = new Set<string>();
    if (this.after === undefined) {
      this.after = await repo.lastDeliverySeq(db);
      return found;
    }
    const rows = await repo.deliveriesSince(db, this.after, [...this.gaps.keys()], LIMIT);
    const now = Date.now();
    let expected = this.after + 1;
    for (const row of rows) {
      if (row.pending) found.add(row.subscription_id);
      if (row.seq < expected) {
        this.gaps.delete(row.seq);
        continue;
      }
      if (row.seq - expected <= MAX_GAPS - this.gaps.size)
        for (let seq = expected; seq < row.seq; seq++) this.gaps.set(seq, now);
      expected = row.seq + 1;
    }
    this.after = expected - 1;
    for (const [seq, missedAt] of this.gaps) if (now - missedAt > GAP_MS) this.gaps.delete(seq);
    return found;
  }
}
