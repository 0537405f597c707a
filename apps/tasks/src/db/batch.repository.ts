import { horizonStatement } from '@app/auth/streams';
import { CompiledQuery, sql, type Kysely } from 'kysely';
import type { Database } from './schema.js';

type Db = Kysely<Database>;

/** How long an applied command answers with its first result (DESIGN.md: 24 h). */
const KEPT_FOR = sql`interval '24 hours'`;

/** Expired commands a batch removes besides one per command it carries, so the table holds about a day of them. */
const SWEEP = 8;

/**
 * Locks the workspace's tasks among `ids` for the transaction, in id order: two transactions that
 * lock their tasks this way first take the locks they share in one order, so they cannot deadlock
 * over them, whatever order their commands name the tasks in.
 */
export async function lockTasks(trx: Db, workspaceId: string, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await sql`select from tasks where workspace_id = ${workspaceId}::uuid and id = any(${ids}::uuid[]) order by id for update`.execute(
    trx,
  );
}

/**
 * Claims a command id for this account in the transaction `trx`: true when it is this
 * transaction's to apply (new, or last applied more than 24 hours ago), false when it was applied
 * within 24 hours. A concurrent transaction holding the same claim makes this one wait for its
 * end: its commit answers false, its rollback true.
 */
export async function claimCommand(trx: Db, accountId: string, commandId: string): Promise<boolean> {
  const { rows } = await sql`
    insert into task_batch_commands as c (account_id, command_id) values (${accountId}::uuid, ${commandId}::uuid)
    on conflict (account_id, command_id) do update set result = null, created_at = now()
      where c.created_at < now() - ${KEPT_FOR}
    returning 1`.execute(trx);
  return rows.length === 1;
}

/** Keeps the result of the command claimed in `trx` (written before it commits). */
export async function keepResult(trx: Db, accountId: string, commandId: string, result: unknown): Promise<void> {
  await trx
    .updateTable('task_batch_commands')
    .set({ result: JSON.stringify(result) })
    .where('account_id', '=', accountId)
    .where('command_id', '=', commandId)
    .execute();
}

/** The first result of a command applied within 24 hours. */
export async function keptResult(db: Db, accountId: string, commandId: string): Promise<unknown> {
  const row = await db
    .selectFrom('task_batch_commands')
    .select('result')
    .where('account_id', '=', accountId)
    .where('command_id', '=', commandId)
    .executeTakeFirst();
  return row?.result;
}

/** Removes up to `count` + a few expired commands of any account, oldest first. */
export async function sweepCommands(db: Db, count: number): Promise<void> {
  await sql`
    delete from task_batch_commands c where (c.account_id, c.command_id) in (
      select e.account_id, e.command_id from task_batch_commands e
      where e.created_at < now() - ${KEPT_FOR}
      order by e.created_at limit ${count + SWEEP} for update skip locked
    )`.execute(db);
}

/** A place in the changes feed: a transaction and a task id it stamped. */
export interface Stamp {
  xid: string;
  id: string;
}

/**
 * The last change the transaction `trx` made to the workspace's tasks, in the feed's order
 * (its id and the greatest task id it stamped; tasks_changes_idx), or undefined when it wrote none.
 */
export async function lastStamp(trx: Db, workspaceId: string): Promise<Stamp | undefined> {
  const { rows } = await sql<{ xid: string; id: string | null }>`
    select pg_current_xact_id()::text as xid, (
      select t.id from tasks t where t.workspace_id = ${workspaceId}::uuid and t.change_xid = pg_current_xact_id()
      order by t.id desc limit 1
    ) as id`.execute(trx);
  const row = rows[0]!;
  return row.id === null ? undefined : { xid: row.xid, id: row.id };
}

/** Where the feed stands now: the horizon below which every change is final (see @app/auth/streams' window). */
export async function feedHorizon(db: Db): Promise<string> {
  const { rows } = await db.executeQuery<{ horizon: string }>(
    CompiledQuery.raw(horizonStatement('select 1 as one'), []),
  );
  return rows[0]!.horizon;
}
