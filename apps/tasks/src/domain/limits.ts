import { CHANGES_CURSOR_DAYS } from './cursor.js';

/** Not shown in the spec; decided here (and documented in the OpenAPI document). */
export const LIMITS = {
  subtasksPerParent: 200,
  /** The spec's: at most 20 reminders a task. */
  remindersPerTask: 20,
  searchCandidates: 1000,
  /** Clock skew allowed for a due time "now" sent by a client. */
  pastDueGraceMs: 60_000,
  /** Tombstones outlive the changes cursors that may need them (30 days) by a day. */
  tombstoneDays: CHANGES_CURSOR_DAYS + 1,
  /** Tombstones pruned after one delete at most: every delete stays bounded. */
  tombstonePruneBatch: 100,
  /** Commands one POST /api/v1/tasks/batch carries at most. */
  batchCommands: 100,
} as const;
