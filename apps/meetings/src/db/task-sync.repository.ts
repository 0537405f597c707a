import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.js';

// What the task_sync job reads and writes: linked items, the feed cursor, the queue.

/** Queues (or moves) the account's task_sync job to run after `delay` (an interval, e.g. '1 second'). */
export async function queueTaskSync(db: Kysely<Database>, accountId: string, delay = '0 seconds'): Promise<void> {
  await sql`select meetings_queue_job('task_sync', ${`task_sync:${accountId}`}, json_build_object('a', ${accountId}::text),
    now() + ${delay}::interval)`.execute(db);
}

/** At the worker's start: a job for every connected account with a linked item. */
export async function queueMissedTaskSyncs(db: Kysely<Database>): Promise<void> {
  await sql`select meetings_queue_job('task_sync', 'task_sync:' || c.account_id, json_build_object('a', c.account_id), now())
    from task_connections c
    where exists (select from items i where i.account_id = c.account_id and i.linked_task_id is not null)`.execute(db);
}

export async function hasLinkedItems(db: Kysely<Database>, accountId: string): Promise<boolean> {
  const row = await db
    .selectFrom('items')
    .select('id')
    .where('account_id', '=', accountId)
    .where('linked_task_id', 'is not', null)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/** Items whose completion changed here and has yet to reach tasks. */
export async function pendingItems(db: Kysely<Database>, accountId: string) {
  return db
    .selectFrom('items')
    .select(['id', 'linked_task_id', 'completed_at', 'updated_at'])
    .where('account_id', '=', accountId)
    .where('task_sync_pending', '=', true)
    .where('linked_task_id', 'is not', null)
    .execute();
}

/** Which of `taskIds` the account's items are linked to (one query for a page of tasks' feed). */
export async function linkedTaskIds(db: Kysely<Database>, accountId: string, taskIds: string[]): Promise<Set<string>> {
  if (taskIds.length === 0) return new Set();
  const rows = await db
    .selectFrom('items')
    .select('linked_task_id')
    .distinct()
    .where('account_id', '=', accountId)
    .where('linked_task_id', 'in', taskIds)
    .execute();
  return new Set(rows.map((r) => r.linked_task_id!));
}

/** The account's items linked to a task (normally one), locked for the change. */
export async function lockLinkedItems(db: Kysely<Database>, accountId: string, taskId: string) {
  return db
    .selectFrom('items')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('linked_task_id', '=', taskId)
    .forUpdate()
    .execute();
}

export async function readCursor(db: Kysely<Database>, accountId: string): Promise<string | null> {
  const row = await db
    .selectFrom('task_connections')
    .select('changes_cursor')
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  return row?.changes_cursor ?? null;
}

export async function saveCursor(db: Kysely<Database>, accountId: string, cursor: string | null): Promise<void> {
  await db
    .updateTable('task_connections')
    .set({ changes_cursor: cursor })
    .where('account_id', '=', accountId)
    .execute();
}

/**
 * Runs `work` unless another process runs the account's sync now (a session advisory lock on
 * one connection, so the work itself may use any): false when it did not run.
 */
export async function withSyncLock(
  db: Kysely<Database>,
  accountId: string,
  work: () => Promise<void>,
): Promise<boolean> {
  return db.connection().execute(async (conn) => {
    const key = sql`hashtextextended(${`task_sync:${accountId}`}, 0)`;
    const { rows } = await sql<{ locked: boolean }>`select pg_try_advisory_lock(${key}) as locked`.execute(conn);
    if (!rows[0]?.locked) return false;
    try {
      await work();
      return true;
    } finally {
      await sql`select pg_advisory_unlock(${key})`.execute(conn);
    }
  });
}
