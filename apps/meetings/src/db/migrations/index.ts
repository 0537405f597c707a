import type { Migration } from 'kysely';
import { authMigrations } from '@app/auth/identity';
import { webhookMigrations } from '@app/auth/webhooks';
import * as meetings from './2026_11_22_1000_meetings.js';

/** Every migration of the meetings schema, by name; names sort in the order they apply. */
export const migrations: Record<string, Migration> = {
  ...authMigrations,
  '2026_11_22_1000_meetings': meetings,
  ...webhookMigrations('meetings'),
};
