import type { Kysely } from 'kysely';
import type { AdminHooks } from '@app/auth/identity';
import type { Database } from './db/schema.js';
import { createPersonalWorkspace } from './db/workspaces.repository.js';

/** Every tasks account gets a personal workspace, created with it (in the tasks database's transaction). */
export const adminHooks: AdminHooks = {
  onAccountCreated: async (trx, accountId) => ({
    workspaceId: await createPersonalWorkspace(trx as Kysely<Database>, accountId),
  }),
};
