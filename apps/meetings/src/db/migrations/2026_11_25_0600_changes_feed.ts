import { sql, type Kysely } from 'kysely';

const FEED_TABLES = ['notes', 'people', 'series', 'meetings'] as const;

/**
 * The changes feed and its streams, the way tasks has them (see @app/auth/streams' window).
 *
 * Every write to a note, person, series or meeting stamps the row with its own transaction id
 * (`change_xid`) and announces `c:<account>:<xid + 1>` on `meetings_streams`, both in one row
 * trigger inside the writing statement (no round trip; the notice is sent at commit, dropped on
 * abort, once per transaction and account). A meeting carries its items, so a statement that
 * inserts, updates or deletes items stamps their meetings once (statement triggers over the
 * transition tables; a meeting already stamped by this transaction is left alone).
 *
 * Adding the column stamps existing rows with this migration's transaction id.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create function meetings_feed_stamp() returns trigger language plpgsql as $$
    begin
      new.change_xid := pg_current_xact_id();
      perform pg_notify('meetings_streams', 'c:' || new.account_id::text || ':' || (new.change_xid::text::numeric + 1)::text);
      return new;
    end $$`.execute(db);
  for (const table of FEED_TABLES) {
    await sql`alter table ${sql.id(table)} add column change_xid xid8 not null default pg_current_xact_id()`.execute(
      db,
    );
    // The feed: one account's rows in change order, from a cursor.
    await sql`create index ${sql.id(`${table}_changes_idx`)} on ${sql.id(table)} (account_id, change_xid, id)`.execute(
      db,
    );
    await sql`create trigger ${sql.id(`${table}_feed_stamp`)} before insert or update on ${sql.id(table)} for each row execute function meetings_feed_stamp()`.execute(
      db,
    );
  }
  await sql`
    create function items_stamp_meetings() returns trigger language plpgsql as $$
    begin
      if tg_op = 'INSERT' then
        update meetings m set change_xid = pg_current_xact_id() where m.id in (select meeting_id from new_items) and m.change_xid <> pg_current_xact_id();
      elsif tg_op = 'DELETE' then
        update meetings m set change_xid = pg_current_xact_id() where m.id in (select meeting_id from old_items) and m.change_xid <> pg_current_xact_id();
      else
        update meetings m set change_xid = pg_current_xact_id()
        where m.id in (select meeting_id from new_items union select meeting_id from old_items) and m.change_xid <> pg_current_xact_id();
      end if;
      return null;
    end $$`.execute(db);
  await sql`create trigger items_stamp_meetings_insert after insert on items referencing new table as new_items for each statement execute function items_stamp_meetings()`.execute(
    db,
  );
  await sql`create trigger items_stamp_meetings_update after update on items referencing old table as old_items new table as new_items for each statement execute function items_stamp_meetings()`.execute(
    db,
  );
  await sql`create trigger items_stamp_meetings_delete after delete on items referencing old table as old_items for each statement execute function items_stamp_meetings()`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const op of ['insert', 'update', 'delete'])
    await sql`drop trigger ${sql.id(`items_stamp_meetings_${op}`)} on items`.execute(db);
  await sql`drop function items_stamp_meetings()`.execute(db);
  for (const table of FEED_TABLES) {
    await sql`drop trigger ${sql.id(`${table}_feed_stamp`)} on ${sql.id(table)}`.execute(db);
    await sql`drop index ${sql.id(`${table}_changes_idx`)}`.execute(db);
    await sql`alter table ${sql.id(table)} drop column change_xid`.execute(db);
  }
  await sql`drop function meetings_feed_stamp()`.execute(db);
}
