import type { Migration } from 'kysely';
import { authMigrations, streamMigrations, webhookMigrations } from '@app/auth/migrations';
import * as created from './__migration__.js';

/**
 * Every migration of the __name__ schema, by name; names sort in the order they apply. Left as
 * written by Prettier: the last key stays quoted, since filled in it starts with its date.
 */
// prettier-ignore
export const migrations: Record<string, Migration> = {
  ...authMigrations,
  ...webhookMigrations('__name__'),
  ...streamMigrations('__name__'),
  '__migration__': created,
};
