import type { Migration } from 'kysely';
import { authMigrations, streamMigrations, webhookMigrations } from '@app/auth/migrations';
import * as createWorkspaces from './2026_11_22_0910_create_workspaces.js';
import * as createTasks from './2026_11_22_1000_create_tasks.js';
import * as positionSequence from './2026_11_22_1100_position_sequence.js';
import * as changesFeed from './2026_11_23_0900_changes_feed.js';
import * as idempotencyKeys from './2026_11_23_2200_idempotency_keys.js';
import * as idempotencySweep from './2026_11_24_0300_idempotency_sweep.js';
import * as keptAnswerAsSent from './2026_11_24_0500_kept_answer_as_sent.js';
import * as changesNotify from './2026_11_25_0600_changes_notify.js';
import * as idempotencyOneStatement from './2026_11_25_1000_idempotency_one_statement.js';
import * as announceWatched from './2026_11_26_0710_announce_watched.js';
import * as keptAnswerAsBody from './2026_11_27_0900_kept_answer_as_body.js';
import * as filterIndexes from './2026_11_28_1200_filter_indexes.js';
import * as taskReminders from './2026_11_28_1200_task_reminders.js';
import * as reminderJobs from './2026_11_28_1300_reminder_jobs.js';
import * as batchCommands from './2026_11_28_1200_batch_commands.js';
import * as announcedSince from './2026_11_28_1400_announced_since.js';
import * as dueIndexCoversFilters from './2026_11_29_0100_due_index_covers_filters.js';

/** Every migration of the tasks schema, by name; names sort in the order they apply. */
export const migrations: Record<string, Migration> = {
  ...authMigrations,
  '2026_11_22_0910_create_workspaces': createWorkspaces,
  '2026_11_22_1000_create_tasks': createTasks,
  '2026_11_22_1100_position_sequence': positionSequence,
  '2026_11_23_0900_changes_feed': changesFeed,
  '2026_11_23_2200_idempotency_keys': idempotencyKeys,
  '2026_11_24_0300_idempotency_sweep': idempotencySweep,
  '2026_11_24_0500_kept_answer_as_sent': keptAnswerAsSent,
  '2026_11_25_0600_changes_notify': changesNotify,
  '2026_11_25_1000_idempotency_one_statement': idempotencyOneStatement,
  ...webhookMigrations('tasks'),
  ...streamMigrations('tasks'),
  '2026_11_26_0710_announce_watched': announceWatched,
  '2026_11_27_0900_kept_answer_as_body': keptAnswerAsBody,
  '2026_11_28_1200_filter_indexes': filterIndexes,
  '2026_11_28_1200_task_reminders': taskReminders,
  '2026_11_28_1300_reminder_jobs': reminderJobs,
  '2026_11_28_1200_batch_commands': batchCommands,
  '2026_11_28_1400_announced_since': announcedSince,
  '2026_11_29_0100_due_index_covers_filters': dueIndexCoversFilters,
};
