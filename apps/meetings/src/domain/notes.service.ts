import { pageWithin } from '@app/http-errors';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { lockAccountResource } from '../db/locks.repository.js';
import * as repo from '../db/notes.repository.js';
import { PAGE_ENVELOPE, decodeCursor, encodeCursor } from './cursor.js';
import { emit } from './events.js';
import { LIMITS, assertWithinLimit } from './limits.js';
import { toNote, type Note } from './views.js';
import { inTransaction } from '@app/auth/runtime';
import { fail } from './errors.js';
import type { Shape } from '@app/http-errors/validation';
import type { notePutBody } from './notes.schemas.js';

export type NoteInput = Shape<typeof notePutBody>;

function revisionConflict(current: Note | null, message: string) {
  return fail('revision_conflict', message, { extra: { current } });
}

/**
 * Creates or replaces the note of `date`. A live note changes only with `baseRevision` equal to
 * its revision; a missing or soft-deleted one is (re)created without it. Returns whether the
 * note came into existence (201) or was updated (200).
 */
export async function putNote(
  db: Kysely<Database>,
  accountId: string,
  date: string,
  input: NoteInput,
): Promise<{ note: Note; created: boolean }> {
  const content = {
    yesterday: input.yesterday ?? '',
    today: input.today ?? '',
    impediments: input.impediments ?? [],
    todayPriority: input.todayPriority ?? '',
  };
  // An account nobody watches (no subscriber to note.updated) needs no event: a new note, or an
  // edit at the current revision, is then one statement. Anything else (a revival, a conflict,
  // the limit, a subscriber) goes the way below, in a transaction with its event.
  if (input.baseRevision === undefined) {
    const row = await repo.insertNewNote(db, accountId, date, content, LIMITS.notes.max, 'note.updated');
    if (row) return { note: toNote(row), created: true };
  } else {
    const row = await repo.replaceLiveNote(db, accountId, date, input.baseRevision, content, 'note.updated');
    if (row) return { note: toNote(row), created: false };
  }
  return inTransaction(db, async (trx) => {
    // Creates race on the date's unique key and on the account's note count: serialize them.
    await lockAccountResource(trx, accountId, 'notes');
    const row = await repo.findNoteForUpdate(trx, accountId, date);
    if (!row) {
      if (input.baseRevision !== undefined)
        throw revisionConflict(null, `There is no note for ${date}; send no baseRevision to create it`);
      assertWithinLimit('notes', await repo.countLiveNotes(trx, accountId));
      return {
        note: await emit(trx, accountId, 'note.updated', toNote(await repo.insertNote(trx, accountId, date, content))),
        created: true,
      };
    }
    if (row.deleted_at !== null) {
      if (input.baseRevision !== undefined && input.baseRevision !== row.revision) {
        throw revisionConflict(toNote(row), `The note for ${date} was deleted at revision ${row.revision}`);
      }
      assertWithinLimit('notes', await repo.countLiveNotes(trx, accountId));
      return {
        note: await emit(
          trx,
          accountId,
          'note.updated',
          toNote(await repo.replaceNote(trx, row.id, content)),
          toNote(row),
        ),
        created: true,
      };
    }
    if (input.baseRevision === undefined)
      throw revisionConflict(
        toNote(row),
        `The note for ${date} exists; send baseRevision ${row.revision} to update it`,
      );
    if (input.baseRevision !== row.revision)
      throw revisionConflict(
        toNote(row),
        `The note for ${date} is at revision ${row.revision}, not ${input.baseRevision}; merge and retry`,
      );
    return {
      note: await emit(
        trx,
        accountId,
        'note.updated',
        toNote(await repo.replaceNote(trx, row.id, content)),
        toNote(row),
      ),
      created: false,
    };
  });
}

/** Soft-deletes the live note of `date`; 404 when there is none. */
export async function deleteNote(db: Kysely<Database>, accountId: string, date: string): Promise<void> {
  // A deletion is an update of the day's note: its data carries deletedAt.
  await inTransaction(db, async (trx) => {
    const row = await repo.softDeleteNote(trx, accountId, date);
    if (!row) throw fail('not_found', `No note for ${date}`);
    // Only a live note is deleted: before, it had no deletedAt.
    const note = toNote(row);
    await emit(trx, accountId, 'note.updated', note, { ...note, deletedAt: null });
  });
}

/**
 * One page of notes: live notes newest date first, or with `changedSince` every note changed
 * after that instant (tombstones included), oldest change first, for sync clients. The page is at
 * most MAX_PAGE_BYTES of JSON: fewer notes and a `nextCursor` beyond that.
 */
export async function listNotes(
  db: Kysely<Database>,
  accountId: string,
  q: { limit: number; cursor?: string; changedSince?: string },
) {
  if (q.changedSince !== undefined) {
    const after = decodeCursor('notes-changed', q.cursor, 2) as [string, string] | undefined;
    const rows = await repo.listNotesChanged(db, accountId, q.changedSince, q.limit + 1, after);
    const { entries, last, hasMore } = pageWithin(rows, q.limit, toNote, PAGE_ENVELOPE);
    return {
      items: entries,
      nextCursor: hasMore && last ? encodeCursor('notes-changed', [last.updated_at, last.date]) : null,
    };
  }
  const before = decodeCursor('notes', q.cursor, 1)?.[0];
  const rows = await repo.listNotesByDate(db, accountId, q.limit + 1, before);
  const { entries, last, hasMore } = pageWithin(rows, q.limit, toNote, PAGE_ENVELOPE);
  return { items: entries, nextCursor: hasMore && last ? encodeCursor('notes', [last.date]) : null };
}
