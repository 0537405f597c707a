import { sql, type Kysely, type Selectable } from 'kysely';
import { noSubscriberFor } from '@app/auth/webhooks';
import type { Database, NotesTable } from './schema.js';

export interface NoteContent {
  yesterday: string;
  today: string;
  impediments: string[];
  todayPriority: string;
}

/**
 * What a note write returns: the columns a note's answer is made of (toNote), named. A write that
 * names its columns runs as a prepared statement (see @app/auth's database.ts), and `search_text`,
 * a second copy of every text field, does not travel back.
 */
const NOTE_COLUMNS = [
  'date',
  'yesterday',
  'today',
  'impediments',
  'today_priority',
  'revision',
  'created_at',
  'updated_at',
  'deleted_at',
] as const;

/** A note as the writes return it, and as toNote reads it. */
export type NoteRow = Pick<Selectable<NotesTable>, (typeof NOTE_COLUMNS)[number]>;

const searchText = (c: NoteContent) => [c.yesterday, c.today, ...c.impediments, c.todayPriority].join('\n');

/** The note of a date, live or soft-deleted, locked for the rest of the transaction. */
export async function findNoteForUpdate(trx: Kysely<Database>, accountId: string, date: string) {
  return trx
    .selectFrom('notes')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('date', '=', date)
    .forUpdate()
    .executeTakeFirst();
}

export async function countLiveNotes(db: Kysely<Database>, accountId: string): Promise<number> {
  const row = await db
    .selectFrom('notes')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('account_id', '=', accountId)
    .where('deleted_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function insertNote(db: Kysely<Database>, accountId: string, date: string, content: NoteContent) {
  return db
    .insertInto('notes')
    .values({
      account_id: accountId,
      date,
      yesterday: content.yesterday,
      today: content.today,
      impediments: content.impediments,
      today_priority: content.todayPriority,
      search_text: searchText(content),
      revision: 1,
    })
    .returning(NOTE_COLUMNS)
    .executeTakeFirstOrThrow();
}

/** What replacing a note's content sets: the content, the next revision, alive, changed now. */
function replacement(content: NoteContent) {
  return {
    yesterday: content.yesterday,
    today: content.today,
    impediments: content.impediments,
    today_priority: content.todayPriority,
    search_text: searchText(content),
    revision: sql<number>`revision + 1`,
    deleted_at: null,
    updated_at: sql<string>`now()`,
  };
}

/** Replaces a note's content (reviving it if soft-deleted) and bumps its revision. */
export async function replaceNote(db: Kysely<Database>, id: string, content: NoteContent) {
  return db
    .updateTable('notes')
    .set(replacement(content))
    .where('id', '=', id)
    .returning(NOTE_COLUMNS)
    .executeTakeFirstOrThrow();
}

/**
 * {@link replaceNote} of the live note of `date` in one statement, only if it is at `revision`
 * and nobody subscribes to `unwatched` (its event: the write then needs none); undefined
 * otherwise. Two writers racing from one revision: the second
 * re-checks the revision on the row the first wrote, so it matches nothing.
 */
export async function replaceLiveNote(
  db: Kysely<Database>,
  accountId: string,
  date: string,
  revision: number,
  content: NoteContent,
  unwatched: string,
) {
  return db
    .updateTable('notes')
    .set(replacement(content))
    .where('account_id', '=', accountId)
    .where('date', '=', date)
    .where('deleted_at', 'is', null)
    .where('revision', '=', revision)
    .where(noSubscriberFor(accountId, unwatched))
    .returning(NOTE_COLUMNS)
    .executeTakeFirst();
}

/**
 * A new note of `date` in one statement, only if the date has no note (live or deleted), the
 * account has fewer than `max` live notes (counted under the account's notes lock, as a create
 * in a transaction counts them) and nobody subscribes to `unwatched` (its event: the write then
 * needs none); undefined otherwise.
 */
export async function insertNewNote(
  db: Kysely<Database>,
  accountId: string,
  date: string,
  content: NoteContent,
  max: number,
  unwatched: string,
) {
  const { rows } = await sql<NoteRow>`
    insert into notes (account_id, date, yesterday, today, impediments, today_priority, search_text, revision)
    select ${accountId}::uuid, ${date}::date, ${content.yesterday}::text, ${content.today}::text, ${content.impediments}::text[],
      ${content.todayPriority}::text, ${searchText(content)}::text, 1
    where ${noSubscriberFor(accountId, unwatched)} and notes_live_count_locked(${accountId}::uuid) < ${max}
    on conflict (account_id, date) do nothing
    returning ${sql.join(NOTE_COLUMNS.map((c) => sql.ref(c)))}`.execute(db);
  return rows[0];
}

/** Soft-deletes a live note; the revision moves on so sync clients see a change. */
export async function softDeleteNote(db: Kysely<Database>, accountId: string, date: string) {
  return db
    .updateTable('notes')
    .set({ deleted_at: sql<string>`now()`, updated_at: sql<string>`now()`, revision: sql<number>`revision + 1` })
    .where('account_id', '=', accountId)
    .where('date', '=', date)
    .where('deleted_at', 'is', null)
    .returning(NOTE_COLUMNS)
    .executeTakeFirst();
}

/** Live notes, newest date first, after the cursor's date. */
export async function listNotesByDate(db: Kysely<Database>, accountId: string, limit: number, beforeDate?: string) {
  let query = db.selectFrom('notes').selectAll().where('account_id', '=', accountId).where('deleted_at', 'is', null);
  if (beforeDate !== undefined) query = query.where('date', '<', beforeDate);
  return query.orderBy('date', 'desc').limit(limit).execute();
}

/** Notes (tombstones included) changed after an instant, oldest change first, after the cursor. */
export async function listNotesChanged(
  db: Kysely<Database>,
  accountId: string,
  since: string,
  limit: number,
  after?: [string, string],
) {
  let query = db.selectFrom('notes').selectAll().where('account_id', '=', accountId).where('updated_at', '>', since);
  if (after) query = query.where(sql<boolean>`(updated_at, date) > (${after[0]}::timestamptz, ${after[1]}::date)`);
  return query.orderBy('updated_at').orderBy('date').limit(limit).execute();
}
