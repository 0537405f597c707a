import { sql, type Kysely } from 'kysely';

/**
 * The changes feed. Every write to a task stamps `change_xid` with its own transaction id (the
 * insert by this default, updates in the same statement). A reader takes the oldest transaction
 * still running, `pg_snapshot_xmin(pg_current_snapshot())`: every row stamped below it is final,
 * and every later write gets an id at or above it, so the feed can hand out rows below that line
 * without ever missing one that commits late (see the README).
 *
 * Adding the column stamps existing rows with this migration's transaction id.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table tasks add column change_xid xid8 not null default pg_current_xact_id()`.execute(db);
  // The feed: one workspace's rows in change order, from a cursor.
  await sql`create index tasks_changes_idx on tasks (workspace_id, change_xid, id)`.execute(db);
  // Pruning old tombstones finds them without a scan.
  await sql`create index tasks_tombstones_idx on tasks (workspace_id, deleted_at) where deleted_at is not null`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index tasks_tombstones_idx`.execute(db);
  await sql`drop index tasks_changes_idx`.execute(db);
  await sql`alter table tasks drop column change_xid`.execute(db);
}
