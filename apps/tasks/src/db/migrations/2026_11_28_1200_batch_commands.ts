import { sql, type Kysely } from 'kysely';

/**
 * The commands of `POST /api/v1/tasks/batch` that were applied, one row per account and command
 * id (the client's UUID), written in the command's own transaction with its result: a command id
 * is applied at most once, and answers its first result for 24 hours. The primary key makes a
 * concurrent batch carrying the same command wait for the first and then find its result. Expired
 * rows are swept a few at a time by the batches themselves, oldest first, through the
 * `created_at` index (as Idempotency-Keys are).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table task_batch_commands (
      account_id uuid not null,
      command_id uuid not null,
      result jsonb,
      created_at timestamptz not null default now(),
      primary key (account_id, command_id)
    )`.execute(db);
  await sql`create index task_batch_commands_created_at_idx on task_batch_commands (created_at)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table task_batch_commands`.execute(db);
}
