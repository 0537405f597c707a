import { sql, type Kysely } from 'kysely';

/**
 * The end of every workspace's manual order comes from one sequence: an appended task takes
 * nextval, which is above every position in use (positions are only ever sequence values,
 * midpoints between two existing positions, or below the first). So creates need neither a
 * lock on the order nor a look at its last position.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create sequence tasks_position_seq`.execute(db);
  await sql`select setval('tasks_position_seq', coalesce((select max(floor(position))::bigint from tasks), 0) + 1, false)`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop sequence tasks_position_seq`.execute(db);
}
