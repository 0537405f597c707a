import { sql, type Kysely } from 'kysely';

/** A series' agenda template: `[{ kind, text }]`, the items each new meeting of it starts with. */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table series add column template jsonb not null default '[]'::jsonb`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table series drop column template`.execute(db);
}
