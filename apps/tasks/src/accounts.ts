import type { AdminHooks } from '@app/auth/identity';
import { createPersonalWorkspace } from './db/workspaces.repository.js';

/** Every tasks account gets a personal workspace, created with it. */
export const adminHooks: AdminHooks = {
  onAccountCreated: async (trx, accountId) => ({ workspaceId: await createPersonalWorkspace(trx, accountId) }),
};
