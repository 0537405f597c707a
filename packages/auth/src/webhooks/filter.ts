import type { AnyDb } from '../database/database.js';
import type { FilterField } from './schemas.js';

/** One event as a filter judges it: its type, its `data` and when it happened (its `timestamp`). */
export interface FilteredEvent {
  type: string;
  data: unknown;
  timestamp: string;
}

/**
 * A service's filter of its webhook events (tasks: a filter expression over the task an event
 * carries). The subscriptions of a service that has one take `filter` (create and PATCH; null
 * clears it), stored with them and shown; other services answer 400 for the field. The worker
 * asks it once per batch of a subscription's deliveries: an event it does not match is settled
 * as skipped, never sent (a replay re-judges it the same way).
 */
export interface WebhookFilter {
  field: FilterField;
  /** Throws the service's 400 (`validation_failed`, path `/filter`, where it is unreadable) for text it cannot read. */
  check(text: string): void;
  /** For each event, whether it matches `text`, its dates in `zone` (the subscriber account's) at the event's time. */
  matches(db: AnyDb, text: string, events: readonly FilteredEvent[], zone: string): Promise<boolean[]>;
}
