import type { Kysely, Updateable } from 'kysely';
import { inTransaction, type ServiceDeps } from '@app/auth/runtime';
import type { SecretKeys } from '@app/auth/webhooks';
import * as itemsRepo from '../db/items.repository.js';
import type { Database, ItemsTable } from '../db/schema.js';
import * as repo from '../db/task-sync.repository.js';
import { ConnectionsService } from './connections.service.js';
import { emit } from './events.js';
import { callTasksApi } from './tasks-link.js';
import { toItem, type ItemRow } from './views.js';

/*
 * Completion both ways between an action and its task (DESIGN "Actions into tasks"), through
 * tasks' public API with the connection's token only. The `task_sync` job of the service's queue
 * runs per account: it sends the completions changed here (complete or reopen the task), then
 * reads tasks' changes feed from its cursor and applies what changed there (completed,
 * reopened, deleted). It queues itself again a second later while the account has a linked
 * item; tasks unreachable, two seconds later, so both sides converge once tasks is back.
 */

type Db = Kysely<Database>;
type Logger = ServiceDeps['logger'];
type Access = { token: string; tasksUrl: string };
interface TaskState {
  id: string;
  completedAt: string | null;
}
type Change = { type: 'upsert'; id: string; item: TaskState } | { type: 'delete'; id: string; item: null };

/** Tasks did not answer as expected: the job tries again later, nothing half applied. */
class SyncInterrupted extends Error {
  constructor(readonly status: number) {
    super(`tasks answered ${status}`);
    this.name = 'SyncInterrupted';
  }
}

/** What a failed run logs: the error's class, its code and tasks' status; never a message that could carry a token or an item's text. */
function failureOf(err: unknown) {
  if (!(err instanceof Error)) return { failure: typeof err };
  const { code } = err as { code?: unknown };
  return {
    failure: err.name,
    ...(typeof code === 'string' ? { code } : {}),
    ...(err instanceof SyncInterrupted ? { status: err.status } : {}),
  };
}

const sameInstant = (a: string | null, b: string | null) =>
  a === null || b === null ? a === b : Date.parse(a) === Date.parse(b);

/** A change to a linked item, with its event. */
async function changeItem(trx: Db, row: ItemRow, set: Updateable<ItemsTable>) {
  const updated = await itemsRepo.updateItem(trx, row.id, set);
  await emit(trx, row.account_id, 'item.updated', toItem(updated), toItem(row));
}

/** The task is gone: the item forgets it (a later send makes a new one, under a new key). */
const unlinked = (row: ItemRow): Updateable<ItemsTable> => ({
  linked_task_id: null,
  linked_task_completed_at: null,
  task_sync_pending: false,
  task_send_round: row.task_send_round + 1,
});

/** A change of tasks' feed applied to the items linked to its task. Completions made here and not yet sent win. */
async function applyChange(db: Db, accountId: string, change: Change): Promise<void> {
  await inTransaction(db, async (trx) => {
    for (const row of await repo.lockLinkedItems(trx, accountId, change.id)) {
      if (change.type === 'delete') await changeItem(trx, row, unlinked(row));
      else if (!row.task_sync_pending && !sameInstant(row.linked_task_completed_at, change.item.completedAt)) {
        const done = change.item.completedAt;
        await changeItem(trx, row, {
          linked_task_completed_at: done,
          completed_at: done === null ? null : (row.completed_at ?? done),
        });
      }
    }
  });
}

/** After tasks took an item's completion: settled, unless the item changed again meanwhile. */
async function settle(db: Db, accountId: string, sent: { id: string; updated_at: string }, task: TaskState | null) {
  await inTransaction(db, async (trx) => {
    const row = await itemsRepo.findItem(trx, accountId, sent.id, true);
    if (!row || !row.task_sync_pending || row.updated_at !== sent.updated_at) return;
    await changeItem(
      trx,
      row,
      task === null ? unlinked(row) : { linked_task_completed_at: task.completedAt, task_sync_pending: false },
    );
  });
}

const taskOf = (body: Record<string, unknown> | null): TaskState | null => {
  const item = body?.item as { id?: unknown; completedAt?: unknown } | undefined;
  return typeof item?.id === 'string'
    ? { id: item.id, completedAt: typeof item.completedAt === 'string' ? item.completedAt : null }
    : null;
};

/** Completes or reopens each task whose action changed here. */
async function push(db: Db, access: Access, accountId: string): Promise<void> {
  for (const item of await repo.pendingItems(db, accountId)) {
    const path = `/api/v1/tasks/${item.linked_task_id}`;
    let answer = await callTasksApi(
      access,
      'POST',
      `${path}/${item.completed_at === null ? 'reopen' : 'complete'}`,
      {},
    );
    const code = (answer.body?.error as { code?: unknown } | undefined)?.code;
    if (answer.status === 404 || code === 'task_deleted') await settle(db, accountId, item, null);
    else {
      // Already as wanted (task_already_completed, task_not_completed): its state as it is.
      if (answer.status === 409) answer = await callTasksApi(access, 'GET', path);
      const task = answer.status === 200 ? taskOf(answer.body) : null;
      if (!task) throw new SyncInterrupted(answer.status);
      await settle(db, accountId, item, task);
    }
  }
}

/** Reads tasks' changes feed from the stored cursor to its end, saving the cursor after each page. */
async function pull(db: Db, access: Access, accountId: string): Promise<void> {
  let cursor = await repo.readCursor(db, accountId);
  for (;;) {
    const query = cursor === null ? '' : `?cursor=${encodeURIComponent(cursor)}`;
    const answer = await callTasksApi(access, 'GET', `/api/v1/tasks/changes${query}`);
    // An expired cursor (or one of another tasks account, connected before): a full sync again.
    if ((answer.status === 410 || answer.status === 400) && cursor !== null) {
      cursor = null;
      continue;
    }
    if (answer.status !== 200) throw new SyncInterrupted(answer.status);
    const page = answer.body as { changes: Change[]; nextCursor: string; hasMore: boolean };
    // The feed is the whole tasks account's: only the changes of linked tasks take a transaction.
    const linked = await repo.linkedTaskIds(db, accountId, [...new Set(page.changes.map((c) => c.id))]);
    for (const change of page.changes) if (linked.has(change.id)) await applyChange(db, accountId, change);
    cursor = page.nextCursor;
    await repo.saveCursor(db, accountId, cursor);
    if (!page.hasMore) return;
  }
}

/** One run of an account's sync; when to run again (null: not while it has no linked item or connection). */
async function syncAccount(
  db: Db,
  connections: ConnectionsService,
  log: Logger,
  accountId: string,
): Promise<string | null> {
  try {
    let connected = true;
    const ran = await repo.withSyncLock(db, accountId, async () => {
      const access = await connections.access(accountId);
      if (!access) {
        connected = false;
        return;
      }
      await push(db, access, accountId);
      await pull(db, access, accountId);
    });
    if (ran && !connected) return null;
    return (await repo.hasLinkedItems(db, accountId)) ? '1 second' : null;
  } catch (err) {
    // Tasks unreachable (503), an answer it should not give, or Postgres away: again shortly.
    log.warn({ accountId, ...failureOf(err) }, 'task sync failed; again in 2 s');
    return '2 seconds';
  }
}

/** The queue's tasks of the meetings service, by name. */
export function taskSyncJobs(db: Db, keys: SecretKeys, log: Logger) {
  const connections = new ConnectionsService(db, keys);
  return {
    task_sync: async (payload: unknown) => {
      const accountId = (payload as { a?: unknown } | null)?.a;
      if (typeof accountId !== 'string') return;
      const next = await syncAccount(db, connections, log, accountId);
      if (next !== null) await repo.queueTaskSync(db, accountId, next);
    },
  };
}
