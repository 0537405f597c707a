import { pageWithin } from '@app/http-errors';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { lockAccountResource } from '../db/locks.repository.js';
import * as itemsRepo from '../db/items.repository.js';
import * as repo from '../db/meetings.repository.js';
import * as seriesRepo from '../db/series.repository.js';
import { PAGE_ENVELOPE, decodeCursor, encodeCursor } from './cursor.js';
import { emit } from './events.js';
import { assertWithinLimit } from './limits.js';
import { applyTemplate } from './occurrences.js';
import { startsAtUtc } from './recurrence.js';
import { inReadingOrder, toItem, toMeeting } from './views.js';
import { inTransaction } from '@app/auth/runtime';
import { fail, notFound } from './errors.js';
import type { Shape } from '@app/http-errors/validation';
import type { meetingCreateBody, meetingPatchBody, meetingsQuery } from './meetings.schemas.js';

/** The status moves DESIGN.md allows; the parking lot's DRAFT never moves. */
const MOVES: Record<string, readonly string[]> = {
  SCHEDULED: ['IN_PROGRESS', 'COMPLETED', 'SKIPPED'],
  IN_PROGRESS: ['COMPLETED', 'SKIPPED'],
};

export type MeetingCreate = Shape<typeof meetingCreateBody>;

/** Adds a SCHEDULED occurrence to an active series on any date that has none yet. */
export async function createMeeting(
  db: Kysely<Database>,
  accountId: string,
  input: MeetingCreate,
  withPrivate: boolean,
) {
  return inTransaction(db, async (trx) => {
    const series = await seriesRepo.findSeries(trx, accountId, input.seriesId);
    if (!series) throw fail('series_not_found', 'Series not found');
    if (series.archived_at !== null) throw fail('series_archived', 'An archived series takes no new meetings');
    await lockAccountResource(trx, accountId, 'meetings');
    assertWithinLimit('meetings', await repo.countLiveMeetings(trx, accountId));
    const { row, created } = await repo.insertMeetingOrGet(trx, accountId, {
      seriesId: series.id,
      date: input.date,
      startsAt: startsAtUtc(input.date, input.startTime ?? series.start_time, series.timezone),
      status: 'SCHEDULED',
      ...(input.sharedNotes !== undefined ? { sharedNotes: input.sharedNotes } : {}),
      ...(input.privateNotes !== undefined ? { privateNotes: input.privateNotes } : {}),
    });
    if (!created) throw fail('meeting_exists', `The series already has a meeting on ${input.date}`);
    await applyTemplate(trx, accountId, series, row.id);
    await emit(trx, accountId, 'meeting.updated', toMeeting(row, false));
    return toMeeting(row, withPrivate);
  });
}

export type MeetingListQuery = Shape<typeof meetingsQuery>;

/** A page of meetings, by date (undated last), then id: at most MAX_PAGE_BYTES of JSON, fewer meetings and a `nextCursor` beyond that. */
export async function listMeetings(db: Kysely<Database>, accountId: string, q: MeetingListQuery, withPrivate: boolean) {
  const rows = await repo.listMeetings(db, accountId, {
    seriesId: q.seriesId,
    status: q.status,
    from: q.from,
    to: q.to,
    after: decodeCursor('meetings', q.cursor, 2),
    limit: q.limit + 1,
  });
  const { entries, last, hasMore } = pageWithin(rows, q.limit, (r) => toMeeting(r, withPrivate), PAGE_ENVELOPE);
  return {
    items: entries,
    nextCursor: hasMore && last ? encodeCursor('meetings', [repo.meetingSortDate(last), last.id]) : null,
  };
}

/**
 * A meeting with its items and the `previous` block: the latest COMPLETED meeting of the series
 * dated before it, with its shared notes, talking points not carried away, decisions and
 * still-open actions. Four queries, whatever the number of items.
 */
export async function getMeeting(db: Kysely<Database>, accountId: string, id: string, withPrivate: boolean) {
  const row = await repo.findMeeting(db, accountId, id);
  if (!row) throw notFound('Meeting');
  const [items, prev] = await Promise.all([
    itemsRepo.listMeetingItems(db, row.id),
    row.date === null ? Promise.resolve(undefined) : repo.findPreviousCompleted(db, row.series_id, row.date),
  ]);
  let previous = null;
  if (prev) {
    const context = await itemsRepo.listPreviousContext(db, prev.id);
    previous = {
      meetingId: prev.id,
      date: prev.date!,
      sharedNotes: prev.shared_notes,
      discussedPoints: context.filter((i) => i.kind === 'TALKING_POINT').map(toItem),
      decisions: context.filter((i) => i.kind === 'DECISION').map(toItem),
      openActions: context.filter((i) => i.kind === 'ACTION').map(toItem),
    };
  }
  return { ...toMeeting(row, withPrivate), items: inReadingOrder(items), previous };
}

export type MeetingPatch = Shape<typeof meetingPatchBody>;

/** Partial update guarded by baseRevision; a stale one is 409 with the server record. */
export async function updateMeeting(
  db: Kysely<Database>,
  accountId: string,
  id: string,
  input: MeetingPatch,
  withPrivate: boolean,
) {
  return inTransaction(db, async (trx) => {
    const row = await repo.findMeeting(trx, accountId, id, true);
    if (!row) throw notFound('Meeting');
    if (input.baseRevision !== row.revision) {
      throw fail(
        'revision_conflict',
        `The meeting is at revision ${row.revision}, not ${input.baseRevision}; merge and retry`,
        { extra: { current: toMeeting(row, withPrivate) } },
      );
    }
    if (
      input.status !== undefined &&
      input.status !== row.status &&
      !(MOVES[row.status] ?? []).includes(input.status)
    ) {
      throw fail('invalid_status_transition', `A ${row.status} meeting cannot become ${input.status}`);
    }
    const updated = await repo.updateMeeting(trx, id, input);
    await emit(trx, accountId, 'meeting.updated', toMeeting(updated, false), toMeeting(row, false));
    return toMeeting(updated, withPrivate);
  });
}

/** Soft-deletes a meeting; its items go out of sight with it. */
export async function deleteMeeting(db: Kysely<Database>, accountId: string, id: string): Promise<void> {
  await inTransaction(db, async (trx) => {
    const row = await repo.softDeleteMeeting(trx, accountId, id);
    if (!row) throw notFound('Meeting');
    await emit(trx, accountId, 'meeting.updated', toMeeting(row, false));
  });
}
