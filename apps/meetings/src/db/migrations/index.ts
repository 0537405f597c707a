import type { Migration } from 'kysely';
import { authMigrations, streamMigrations, webhookMigrations } from '@app/auth/migrations';
import * as meetings from './2026_11_22_1000_meetings.js';
import * as changesFeed from './2026_11_25_0600_changes_feed.js';
import * as noteCountUnderLock from './2026_11_25_1000_note_count_under_lock.js';
import * as announceWatched from './2026_11_26_0710_announce_watched.js';
import * as seriesTemplate from './2026_11_28_1200_series_template.js';
import * as calendarFeeds from './2026_11_28_1210_calendar_feeds.js';
import * as taskConnections from './2026_11_28_1220_task_connections.js';
import * as itemLinkedTask from './2026_11_28_1230_item_linked_task.js';

/** Every migration of the meetings schema, by name; names sort in the order they apply. */
export const migrations: Record<string, Migration> = {
  ...authMigrations,
  '2026_11_22_1000_meetings': meetings,
  '2026_11_25_0600_changes_feed': changesFeed,
  '2026_11_25_1000_note_count_under_lock': noteCountUnderLock,
  ...webhookMigrations('meetings'),
  ...streamMigrations('meetings'),
  '2026_11_26_0710_announce_watched': announceWatched,
  '2026_11_28_1200_series_template': seriesTemplate,
  '2026_11_28_1210_calendar_feeds': calendarFeeds,
  '2026_11_28_1220_task_connections': taskConnections,
  '2026_11_28_1230_item_linked_task': itemLinkedTask,
};
