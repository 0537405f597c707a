import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { findPersonalWorkspace } from '../db/workspaces.repository.js';
import { tomorrowCache, type StartOfTomorrow } from './due-time.js';

/**
 * What the tasks domain remembers between requests: made once per app (createApp) and handed to
 * the routes, never module state, so two apps in one process (tests, a restart) share nothing.
 */
export interface TaskCaches {
  /** The caller's workspace: its personal one, which never changes once created. */
  workspaceOf(accountId: string): Promise<string>;
  /** The line between `today` and `upcoming` in a zone. */
  startOfTomorrow: StartOfTomorrow;
}

/** The personal workspace of each account, remembered (at most `maxEntries` accounts, then forgotten at once). */
function workspaceResolver(db: Kysely<Database>, maxEntries = 10_000): TaskCaches['workspaceOf'] {
  const known = new Map<string, string>();
  return async (accountId) => {
    const cached = known.get(accountId);
    if (cached) return cached;
    const id = await findPersonalWorkspace(db, accountId);
    // Accounts are created with their workspace in one transaction; a missing one is a server fault.
    if (!id) throw new Error('account has no personal workspace');
    if (known.size >= maxEntries) known.clear();
    known.set(accountId, id);
    return id;
  };
}

/** The caches of one tasks app. */
export function taskCaches(db: Kysely<Database>): TaskCaches {
  return { workspaceOf: workspaceResolver(db), startOfTomorrow: tomorrowCache() };
}
