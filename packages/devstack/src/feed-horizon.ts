import { sql, type Kysely } from 'kysely';
import { pollUntil } from './poll.js';

/**
 * Waits until no transaction of the database cluster older than `xid` is open. A changes feed
 * hands out a change only once every older transaction has ended (the test files running beside
 * one share the cluster), so from then on every page's horizon is past `xid`: a full sync begun
 * now sees every write up to it in its first window. The cluster's oldest open transaction
 * (`pg_snapshot_xmin`) never moves back, so one reading past `xid` is enough.
 */
export async function clusterSettledPast<DB>(db: Kysely<DB>, xid: string, timeoutMs = 30_000): Promise<void> {
  const past = async () =>
    (await sql<{ past: boolean }>`select pg_snapshot_xmin(pg_current_snapshot()) > ${xid}::xid8 as past`.execute(db))
      .rows[0]!.past;
  if (!(await pollUntil(past, Boolean, { timeoutMs })))
    throw new Error(`a transaction older than ${xid} stayed open for ${timeoutMs} ms`);
}
