import type { Migration } from 'kysely';
import { authMigrations, streamMigrations, webhookMigrations } from '@app/auth/migrations';
import * as clipboard from './2026_11_22_1000_clipboard.js';
import * as createItem from './2026_11_23_0900_create_item.js';
import * as sharedRules from './2026_11_23_1300_shared_rules.js';
import * as pruneByIndex from './2026_11_23_1500_prune_by_index.js';
import * as genericPlans from './2026_11_23_1700_generic_plans.js';
import * as oneStateWrite from './2026_11_24_0100_one_state_write.js';
import * as changesNotify from './2026_11_25_0600_changes_notify.js';
import * as announceWatched from './2026_11_26_0710_announce_watched.js';
import * as plannedOnce from './2026_11_26_1200_planned_once.js';
import * as privacy from './2026_11_27_0700_privacy.js';

/** Every migration of the clipboard schema, by name; names sort in the order they apply. */
export const migrations: Record<string, Migration> = {
  ...authMigrations,
  '2026_11_22_1000_clipboard': clipboard,
  '2026_11_23_0900_create_item': createItem,
  '2026_11_23_1300_shared_rules': sharedRules,
  '2026_11_23_1500_prune_by_index': pruneByIndex,
  '2026_11_23_1700_generic_plans': genericPlans,
  '2026_11_24_0100_one_state_write': oneStateWrite,
  '2026_11_25_0600_changes_notify': changesNotify,
  ...webhookMigrations('clipboard'),
  ...streamMigrations('clipboard'),
  '2026_11_26_0710_announce_watched': announceWatched,
  '2026_11_26_1200_planned_once': plannedOnce,
  '2026_11_27_0700_privacy': privacy,
};
